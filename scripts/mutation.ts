/**
 * `npm run test:mutation [-- <module>… | --mutate <file>[,<file>…]] [stryker options]`: StrykerJS on
 * the security- and data-critical modules (scripts/mutation-modules.ts lists them with their tests).
 *
 *   npm run test:mutation                          every module, one after the other
 *   npm run test:mutation -- merge ssrf            the named modules
 *   npm run test:mutation -- --mutate shared/src/domain/contacts/merge.ts
 *                                                  that file only, with its module's tests
 *   npm run test:mutation -- auth --incremental    only mutants whose code or tests changed since the
 *                                                  last run (quick while adding tests; scores: full runs)
 *
 * Other options go to `stryker run` unchanged (e.g. `--concurrency 2`). Reports:
 * .tmp/mutation/<module>/report.html and report.json. Not part of `npm test` or CI (slow on 2 cores).
 */
import { spawn } from 'node:child_process'
import { rmdirSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { MUTATION_MODULES as MODULES } from './mutation-modules.ts'

const args = process.argv.slice(2)
const names: string[] = []
const passThrough: string[] = []
let mutate: string[] | null = null
for (let i = 0; i < args.length; i++) {
  const a = args[i]!
  if (a === '--mutate' || a === '-m') {
    mutate = (args[++i] ?? '')
      .split(',')
      .filter(Boolean)
      .map((f) => relative(process.cwd(), resolve(f)))
  } else if (a in MODULES) {
    names.push(a)
  } else {
    passThrough.push(a)
  }
}

/** a glob of the config (only `**` and `*` are used there) as a regular expression */
function globToRegExp(glob: string): RegExp {
  const escaped = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*\*\//g, '\u0000')
    .replace(/\*/g, '[^/]*')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL marks `**/` while `*` is rewritten (no glob contains one)
    .replace(/\u0000/g, '(?:.*/)?')
  return new RegExp(`^${escaped}$`)
}

if (mutate !== null) {
  if (mutate.length === 0) {
    console.error('--mutate needs a file')
    process.exit(2)
  }
  for (const file of mutate) {
    const path = file.split(':')[0]! // a mutation range (file:1-10) keeps its file's module
    const owner = Object.entries(MODULES).find(([, m]) => m.mutate.some((g) => globToRegExp(g.split(':')[0]!).test(path)))
    if (!owner) {
      console.error(`${file} is in no module of scripts/mutation-modules.ts (${Object.keys(MODULES).join(', ')})`)
      process.exit(2)
    }
    if (!names.includes(owner[0])) names.push(owner[0])
  }
}
const selected = names.length > 0 ? names : Object.keys(MODULES)

function run(name: string): Promise<number> {
  const own = mutate?.filter((f) => MODULES[name]!.mutate.some((g) => globToRegExp(g.split(':')[0]!).test(f.split(':')[0]!)))
  const strykerArgs = [
    join('node_modules', '@stryker-mutator', 'core', 'bin', 'stryker.js'),
    'run',
    'stryker.config.mjs',
    ...(own && own.length > 0 ? ['--mutate', own.join(',')] : []),
    ...passThrough,
  ]
  console.log(`> stryker (${name})${own?.length ? `: ${own.join(', ')}` : ''}`)
  return new Promise((done) => {
    const child = spawn(process.execPath, strykerArgs, { stdio: 'inherit', env: { ...process.env, STRYKER_MODULE: name } })
    child.on('exit', (code, signal) => done(code ?? (signal ? 1 : 0)))
  })
}

let exitCode = 0
for (const name of selected) exitCode = (await run(name)) || exitCode
// each run removes its own .stryker-tmp/<module>; the parent goes too once nothing else is in it
try {
  rmdirSync('.stryker-tmp')
} catch {
  // absent, or another run's sandbox is still there
}
process.exit(exitCode)
