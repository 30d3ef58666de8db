// Fail fast on an old runtime: the platform needs Node 24 (pinned through the `node`
// devDependency) and at least 22 for node:sqlite and native TypeScript.
const major = Number(process.versions.node.split('.')[0])
if (major < 22) {
  throw new Error(`Node ${process.versions.node} is too old for these tests: run them through npm (which uses the pinned Node 24)`)
}
