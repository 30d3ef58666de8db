/**
 * Runs node:http or fetch requests in a process of its own (the server under test must not share
 * an event loop with its client: that changes when each side reads and closes). stdin: JSON
 * `{client: 'http' | 'fetch', jobs: [{target, bodyFile}]}`; stdout: the results as JSON.
 */
import { readFileSync } from 'node:fs'
import { text } from 'node:stream/consumers'
import { closeFetchAgent, fetchPost, nodeHttpPost, type ClientResult, type Target } from './clients.ts'

const input = JSON.parse(await text(process.stdin)) as { client: 'http' | 'fetch'; jobs: Array<{ target: Target; bodyFile: string }> }
const bodies = new Map<string, Buffer>()
const results: ClientResult[] = []
for (const job of input.jobs) {
  let body = bodies.get(job.bodyFile)
  if (!body) bodies.set(job.bodyFile, (body = readFileSync(job.bodyFile)))
  results.push(input.client === 'http' ? await nodeHttpPost(job.target, body) : await fetchPost(job.target, body))
}
await closeFetchAgent()
process.stdout.write(JSON.stringify(results))
