/**
 * The test command (`npm test`): the static checks (tsc, biome's format and lint, knip), start the Firestore and Pub/Sub emulators on free
 * ports, run every vitest suite against them, stop the emulators by pid (the whole chain), and
 * print one closing line `tests: N passed, N failed[, N skipped]`.
 *
 * Two vitest passes share the emulators: the main suites (vitest.config.ts), then the
 * reliability suite (vitest.reliability.config.ts: crash safety, shutdown, fuzzing, SSRF, …,
 * one file at a time because they start processes and measure). Their figures are printed.
 *
 * Flags: --no-emulators (embedded only), --no-typecheck (skips the static checks), --quick (main suites only),
 * --reliability (reliability suite only), and any further args go to vitest. A filter that
 * selects no test file in any config that ran is a failure (a mistyped path is not a green run).
 */
import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join, relative } from 'node:path'
import { startEmulator, type RunningEmulator } from './lib/emulators.ts'

const major = Number(process.versions.node.split('.')[0])
if (major < 22) {
  console.error(
    `Node ${process.versions.node} is too old: the tests need Node 22 or newer (the project pins Node 24 through the "node" devDependency; run through npm).`,
  )
  process.exit(1)
}

const argv = process.argv.slice(2)
const useEmulators = !argv.includes('--no-emulators')
const typecheck = !argv.includes('--no-typecheck')
const configs = argv.includes('--reliability')
  ? ['vitest.reliability.config.ts']
  : argv.includes('--quick')
    ? ['vitest.config.ts']
    : ['vitest.config.ts', 'vitest.reliability.config.ts']
const vitestArgs = argv.filter((a) => !['--no-emulators', '--no-typecheck', '--reliability', '--quick'].includes(a))
const tmp = join(process.cwd(), '.tmp')
mkdirSync(tmp, { recursive: true })

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: 'inherit', env })
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)))
  })
}

/** the first line of a failure message, bounded (the full text is in vitest's own output above) */
function firstLine(text: string | undefined): string {
  return (text ?? '').split('\n')[0]!.slice(0, 300)
}

const emulators: RunningEmulator[] = []
let stopping = false
async function stopAll(): Promise<void> {
  if (stopping) return
  stopping = true
  await Promise.all(emulators.map((e) => e.stop()))
}
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    void stopAll().finally(() => process.exit(130))
  })
}

let exitCode = 0
try {
  if (typecheck) {
    // the static checks, each a failure of its own: types, then format and lint (biome.jsonc),
    // then unused files, exports and dependencies (knip.jsonc)
    const checks: Array<[string, string[]]> = [
      ['type-check (tsc --noEmit)', [join('node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json', '--noEmit']],
      ['format and lint (biome ci; `npx biome check --write .` fixes most)', [join('node_modules', '@biomejs', 'biome', 'bin', 'biome'), 'ci', '.']],
      ['unused code and dependencies (knip)', [join('node_modules', 'knip', 'bin', 'knip.js')]],
    ]
    const failed: string[] = []
    for (const [what, args] of checks) {
      console.log(`> ${what}`)
      if ((await run(process.execPath, args)) !== 0) failed.push(what)
    }
    if (failed.length > 0) {
      console.log(`failed:\n${failed.map((f) => `  ${f}`).join('\n')}`)
      console.log(`tests: 0 passed, ${failed.length} failed`)
      process.exit(1)
    }
  }
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'test' }
  if (useEmulators) {
    const project = 'demo-lsv-test'
    console.log('> starting the Firestore and Pub/Sub emulators')
    const [fs, ps] = await Promise.all([startEmulator('firestore', tmp, project), startEmulator('pubsub', tmp, project)])
    emulators.push(fs, ps)
    env.FIRESTORE_EMULATOR_HOST = fs.hostPort
    env.PUBSUB_EMULATOR_HOST = ps.hostPort
    env.EMULATOR_PROJECT = project
    // no GCE metadata server here: google-auth would otherwise probe it and warn (ENOTFOUND)
    env.METADATA_SERVER_DETECTION ??= 'none'
    console.log(`  firestore ${fs.hostPort} (pid ${fs.child.pid}), pubsub ${ps.hostPort} (pid ${ps.child.pid})`)
  }
  const totals = { passed: 0, failed: 0, skipped: 0 }
  // test files each config selected (a filter may match files of one config only; it must match some)
  let filesSelected = 0
  const failures: string[] = []
  for (const config of configs) {
    const report = join(tmp, `vitest-report-${config.replace(/\W+/g, '-')}.json`)
    rmSync(report, { force: true })
    console.log(`> vitest --config ${config}`)
    const code = await run(
      process.execPath,
      [
        join('node_modules', 'vitest', 'vitest.mjs'),
        'run',
        '--config',
        config,
        '--reporter=default',
        '--reporter=json',
        `--outputFile.json=${report}`,
        ...(vitestArgs.length > 0 ? ['--passWithNoTests'] : []),
        ...vitestArgs,
      ],
      env,
    )
    exitCode = exitCode || code
    try {
      const r = JSON.parse(readFileSync(report, 'utf8')) as {
        numPassedTests: number
        numFailedTests: number
        numPendingTests: number
        numTodoTests: number
        numTotalTests: number
        testResults?: Array<{
          name: string
          status: string
          message?: string
          assertionResults?: Array<{ fullName: string; status: string; failureMessages?: string[] }>
        }>
      }
      // unfiltered, every config must select tests; filtered, one config selecting none is fine
      // (the filter names the other config's files), all of them selecting none is not (below)
      if (r.numTotalTests === 0 && vitestArgs.length === 0) exitCode = exitCode || 1
      filesSelected += r.testResults?.length ?? 0
      for (const file of r.testResults ?? []) {
        const failedTests = (file.assertionResults ?? []).filter((a) => a.status === 'failed')
        for (const a of failedTests) failures.push(`${relative(process.cwd(), file.name)} > ${a.fullName}: ${firstLine(a.failureMessages?.[0])}`)
        // a file that failed outside any test (an import error, a hook) has no failed assertion
        if (file.status === 'failed' && failedTests.length === 0) failures.push(`${relative(process.cwd(), file.name)}: ${firstLine(file.message)}`)
      }
      totals.passed += r.numPassedTests
      totals.failed += r.numFailedTests
      totals.skipped += r.numPendingTests + r.numTodoTests
    } catch {
      if (code !== 0 || vitestArgs.length === 0) {
        totals.failed += 1
        exitCode = exitCode || 1
      }
    }
  }
  if (vitestArgs.length > 0 && filesSelected === 0) {
    // a mistyped path must not look like a green run
    console.error(
      `no test file matches ${vitestArgs.join(' ')} in ${configs.join(' or ')}${configs.length === 1 ? ' (the other config is not run with this flag)' : ''}`,
    )
    totals.failed += 1
    exitCode = exitCode || 1
  }
  // the names of what failed, last, where a CI excerpt (the output's tail) still shows them
  if (failures.length > 0) console.log(`failed:\n${failures.map((f) => `  ${f}`).join('\n')}`)
  console.log(`tests: ${totals.passed} passed, ${totals.failed} failed${totals.skipped ? `, ${totals.skipped} skipped` : ''}`)
} catch (err) {
  console.error(err)
  exitCode = 1
  console.log('tests: 0 passed, 1 failed')
} finally {
  await stopAll()
}
process.exit(exitCode)
