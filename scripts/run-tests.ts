/**
 * The test command (`npm test`): the static checks (tsc, biome's format and lint, knip), start the
 * Firestore and Pub/Sub emulators on free ports, run every vitest suite against them, stop the
 * emulators by pid (the whole chain), print the ten slowest test files, each pass's wall time,
 * the run's CPU use (scripts/lib/run-cpu.ts: the cores' busy share and the run's own CPU seconds)
 * and one closing line `tests: N passed, N failed[, N skipped]`.
 *
 * The static checks run beside the main suites (their output is printed as each ends): they are
 * each a failure of their own, and a failing one no longer hides the tests' results.
 * Three vitest passes share the emulators:
 * - the main suites (vitest.config.ts), their output as it comes;
 * - beside them, at the same time, the reliability suite's untimed group (vitest.reliability.config.ts
 *   `--project reliability`: crash safety, fuzzing, SSRF, …; files that assert no time bound), one
 *   file at a time (about 3 of the main suites' 15 minutes, one process more on the cores rather
 *   than two); its output is held and printed in one piece when the main suites have ended, so
 *   the two never interleave;
 * - after both, the group that measures time (`--project reliability-serial`: shutdown within
 *   10 s, a stall answered within its deadline, …), one file at a time with nothing beside it.
 * Their figures are printed. Within each pass the known-slow files start first
 * (test/setup/slow-files-first.ts). `--reliability` runs the reliability config alone (its two
 * groups one after the other, as the config orders them), and a `--project` given by the caller
 * runs each config once as it is, with that project.
 *
 * Counting: scripts/lib/vitest-summary-reporter.ts writes each pass's files and counts (each pass
 * its own summary file, the pass beside the main suites too, counted the same way once it ends). A
 * test that could not run because its suite's set-up failed (a `beforeAll` that threw, a browser
 * that did not start), a file that failed outside any test (an import error) and a pass that
 * exited non-zero without a failed test (or before reporting) all count as failed, never as skipped.
 *
 * The portal's browser tests drive Debian's Chromium at /usr/bin/chromium. When a run selects them
 * and it is missing, it is installed the way .ci/install-chromium does (that script) if this
 * process may install packages (root, with apt-get); otherwise the run stops at once, naming the
 * one command that installs it.
 *
 * Every process the run starts gets the run's own temporary folder as TMPDIR; at the end what the
 * tests left in it is named and it is removed whole (`sweepRunTmp`), as what they left running is
 * stopped and named (`stopLeftovers`).
 *
 * Flags: --no-emulators (embedded only), --no-typecheck (skips the static checks), --quick (main suites only,
 * without the whole-stack ones and the docs' CLI check unless a filter names files),
 * --reliability (reliability suite only), --config <file> (that vitest config only), and any further args go to vitest
 * (`--maxWorkers=N` to the main suites only). A filter that
 * selects no test file in any config that ran is a failure (a mistyped path is not a green run).
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { startEmulator, type RunningEmulator } from './lib/emulators.ts'
import { CLAIMS, PORT_CLAIMS_ENV } from './lib/free-port.ts'
import { descendantsOf, killAll, processesMarked } from './lib/process-tree.ts'
import { cpuSnapshot, cpuUseSince, formatCpuUse } from './lib/run-cpu.ts'
import type { RunSummary } from './lib/vitest-summary-reporter.ts'
import { LEFT_OUT_ENV } from './lib/left-out.ts'

const major = Number(process.versions.node.split('.')[0])
if (major < 22) {
  console.error(
    `Node ${process.versions.node} is too old: the tests need Node 22 or newer (the project pins Node 24 through the "node" devDependency; run through npm).`,
  )
  process.exit(1)
}

const startedAt = Date.now()
const cpuAtStart = cpuSnapshot()
const argv = process.argv.slice(2)
const useEmulators = !argv.includes('--no-emulators')
const typecheck = !argv.includes('--no-typecheck')
const MAIN = 'vitest.config.ts'
const RELIABILITY = 'vitest.reliability.config.ts'
/** `--config <file>`: that vitest config alone (test/local/run-tests-counting.test.ts runs a fixture's) */
const configAt = argv.indexOf('--config')
const ownConfig = configAt >= 0 ? argv.splice(configAt, 2)[1] : undefined
const configs = ownConfig ? [ownConfig] : argv.includes('--reliability') ? [RELIABILITY] : argv.includes('--quick') ? [MAIN] : [MAIN, RELIABILITY]
const vitestArgs = argv.filter((a) => !['--no-emulators', '--no-typecheck', '--reliability', '--quick'].includes(a))
/** the file filters among the vitest args (a flag's value, as in `-t name`, is not one) */
const filters = vitestArgs.filter((a, i) => !a.startsWith('-') && !['-t', '--testNamePattern', '--project'].includes(vitestArgs[i - 1] ?? ''))
/**
 * What `--quick` leaves out when no filter names files: the suites that start whole stacks (npm
 * start, start:cloud, a browser) and take minutes, and the check of the deployment docs' commands
 * against the gcloud and bq CLIs' own help pages (two dozen Python processes, ~1 min of CPU; only
 * docs/deploy.md and docs/operations.md change what it finds). Named by a filter, they run under
 * --quick too.
 */
const QUICK_LEAVES_OUT = [
  'test/browser/**',
  'test/cloud/**',
  'test/blackbox/**',
  'test/local/**',
  'test/portal/start-banner.test.ts',
  'test/infra/docs-commands.test.ts',
]
const quickExcludes = argv.includes('--quick') && !ownConfig && filters.length === 0 ? QUICK_LEAVES_OUT : []
/**
 * Main-suite files at a time: two (one on a single core), or `--maxWorkers=N` given after `--`.
 * Measured on a quiet 2-core machine (main at 53dd321): one at a time took 27–30 min for the whole
 * `npm test`, two at a time 17 min 21 s (main suites 879 s, 228 files), with the one failure a
 * port race between two files that scripts/lib/free-port.ts removes. On a busy machine parallel
 * files starved the shared emulators (Firestore calls past the 30 s test timeout): `--maxWorkers=1`
 * then. The value goes to the main suites only: the reliability config sets its own per group
 * (a CLI value would also run its timed files two at a time).
 */
const cores = availableParallelism()
const load = loadavg()[0]!
const workersArg = vitestArgs.filter((a) => a.startsWith('--maxWorkers'))
const mainWorkers = workersArg.length > 0 ? workersArg : [`--maxWorkers=${Math.min(2, cores)}`]
const passArgs = vitestArgs.filter((a) => !a.startsWith('--maxWorkers'))

/** One vitest run: a config, maybe one of its projects; `beside` runs at the same time as the main suites. */
interface Pass {
  config: string
  project?: string
  beside?: boolean
}
/**
 * The whole run: the main suites with the reliability suite's untimed group beside them, then its
 * timed group alone. The untimed group runs one file at a time there (its crash-safety file alone
 * takes two minutes: two at a time would save little and add a process to the two cores the main
 * suites already fill). A caller's own `--project` would be added to ours: each config once then.
 */
const ownProject = passArgs.some((a) => a === '--project' || a.startsWith('--project='))
const passes: Pass[] =
  configs.includes(MAIN) && configs.includes(RELIABILITY) && !ownProject
    ? [{ config: MAIN }, { config: RELIABILITY, project: 'reliability', beside: true }, { config: RELIABILITY, project: 'reliability-serial' }]
    : configs.map((config) => ({ config }))
const passName = (p: Pass) => `vitest --config ${p.config}${p.project ? ` --project ${p.project}` : ''}`
const tmp = join(process.cwd(), '.tmp')
/**
 * Every node process the run starts with its environment (vitest's workers, the static checks,
 * the CLI calls of the tests) keeps V8's compiled code of the modules it loads in one folder, and
 * the next process that loads the same files takes it from there (node's module compile cache,
 * keyed by each file's content and node's version: an edited file is compiled again). The stacks
 * the tests start in a clean environment use npm start's own cache (scripts/lib/compile-cache.ts);
 * the deployed shape's services use none, as on Cloud Run. A start-local and CLI subset of the
 * suite took 45 instead of 54 CPU s (docs/performance.md, "Start-up"). A caller's own
 * NODE_COMPILE_CACHE (or NODE_DISABLE_COMPILE_CACHE=1) is kept.
 */
process.env.NODE_COMPILE_CACHE ??= join(tmp, 'node-compile-cache')
mkdirSync(tmp, { recursive: true })
/** test/infra and test/local point it elsewhere to see both branches; the browser tests use /usr/bin/chromium */
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
const INSTALL_CHROMIUM = 'sudo apt-get update && sudo apt-get install -y chromium'

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: 'inherit', env })
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)))
  })
}

/** Runs a command with its output kept, for printing in one piece when it ends. */
function runQuietly(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env })
    let output = ''
    child.stdout.on('data', (d) => (output += d))
    child.stderr.on('data', (d) => (output += d))
    child.on('exit', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }))
  })
}

function seconds(ms: number): string {
  return ms >= 60_000 ? `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s` : `${(ms / 1000).toFixed(1)} s`
}

/** the closing line, after a run that ended before or instead of the tests */
function stop(message: string, failed = 1): never {
  console.error(message)
  console.log(`tests: 0 passed, ${failed} failed`)
  process.exit(1)
}

/** Whether this run selects a browser test: the main suites with no filter, or a filter naming one. */
function selectsBrowserTests(): boolean {
  if (!configs.includes(MAIN) || quickExcludes.length > 0) return false
  if (filters.length === 0) return true
  const browser = readdirSync(join('test', 'browser'))
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `test/browser/${f}`)
  return filters.some((f) => f.startsWith('test/browser/') || browser.some((b) => b.includes(f.replace(/^\.\//, ''))))
}

function onPath(program: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && existsSync(join(dir, program)))
}

/** Chromium is there, or installed now, or the run stops at once with the command that installs it. */
async function ensureChromium(): Promise<void> {
  if (existsSync(CHROMIUM)) return
  const mayInstall = process.getuid?.() === 0 && onPath('apt-get')
  if (!mayInstall) {
    stop(`${CHROMIUM} is missing: the portal's browser tests drive Debian's Chromium. Install it, then run the tests again:\n  ${INSTALL_CHROMIUM}`)
  }
  console.log(`> installing Debian's chromium (${CHROMIUM} is missing; .ci/install-chromium)`)
  if ((await run('bash', [join('.ci', 'install-chromium')])) !== 0 || !existsSync(CHROMIUM)) {
    stop(`installing chromium failed (above); install it yourself, then run the tests again:\n  ${INSTALL_CHROMIUM.replaceAll('sudo ', '')}`)
  }
}

/** the static checks, one after the other (each a failure of its own); resolves with the failed ones */
async function staticChecks(): Promise<string[]> {
  const checks: Array<[string, string[]]> = [
    ['type-check (tsc --noEmit)', [join('node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json', '--noEmit']],
    ['format and lint (biome ci; `npx biome check --write .` fixes most)', [join('node_modules', '@biomejs', 'biome', 'bin', 'biome'), 'ci', '.']],
    ['unused code and dependencies (knip)', [join('node_modules', 'knip', 'bin', 'knip.js')]],
  ]
  const failed: string[] = []
  for (const [what, args] of checks) {
    const began = Date.now()
    const { code, output } = await runQuietly(process.execPath, args)
    if (code !== 0) failed.push(what)
    console.log(`> ${what}: ${code === 0 ? 'ok' : 'FAILED'} (${seconds(Date.now() - began)})${code === 0 ? '' : `\n${output.trimEnd()}`}`)
  }
  return failed
}

/**
 * Every process this run starts, however far down, carries this mark in its environment, so the
 * run can stop what it started by pid even where no parent is left to ask: an emulator a test
 * file started in its own session, whose test worker a Ctrl-C killed before its afterAll ran.
 */
const RUN_MARK_ENV = 'LSV_TEST_RUN'
const runMark = `${process.pid}-${randomUUID()}`
process.env[RUN_MARK_ENV] = runMark

/**
 * The run's own temporary folder: every process the run starts gets it as TMPDIR, so what the
 * tests make with `os.tmpdir()` (data folders, Chromium's profiles, emulator logs) lands in it.
 * At the end, once nothing the run started is left running, what is still in it is named (a test
 * that does not clean up is seen, by its folder's prefix) and the folder goes, whole: a test whose
 * clean-up lost a race (a connection's file made again after its folder was emptied) or a run cut
 * short by Ctrl-C leaves nothing in the machine's temporary folder. The port claims stay
 * machine-wide (scripts/lib/free-port.ts).
 */
process.env[PORT_CLAIMS_ENV] = CLAIMS
const runTmp = mkdtempSync(join(tmpdir(), 'lsv-run-'))
process.env.TMPDIR = runTmp
// every way out, `stop()`'s early exits too (a no-op once stopAll has swept it)
process.on('exit', () => sweepRunTmp())

const emulators: RunningEmulator[] = []
let stopping = false
/** the run's own emulators, then whatever else still carries the run's mark, then the run's temporary folder */
async function stopAll(): Promise<void> {
  if (stopping) return
  stopping = true
  await Promise.all(emulators.map((e) => e.stop()))
  await killAll(processesMarked(RUN_MARK_ENV, runMark))
  sweepRunTmp()
}
/** What the tests left in the run's temporary folder: named, then removed with the folder. */
function sweepRunTmp(): void {
  let left: string[]
  try {
    left = readdirSync(runTmp).sort()
  } catch {
    return
  }
  if (left.length > 0) console.log(`> left in the run's temporary folder by the tests, now removed (${left.length}):\n${left.map((n) => `  ${n}`).join('\n')}`)
  rmSync(runTmp, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 })
}
/**
 * Once every pass has ended: what the tests started and left running (the run's emulators
 * aside), stopped by pid and named, so a leak is seen instead of outliving the run.
 */
async function stopLeftovers(): Promise<void> {
  const own = new Set(emulators.flatMap((e) => (e.child.pid ? [e.child.pid, ...descendantsOf(e.child.pid)] : [])))
  const left = processesMarked(RUN_MARK_ENV, runMark).filter((pid) => !own.has(pid))
  if (left.length === 0) return
  const named = left.map((pid) => {
    try {
      return `${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim().slice(0, 80)}`
    } catch {
      return String(pid)
    }
  })
  console.log(`> left running by the tests, now stopped (${left.length}):\n${named.map((n) => `  ${n}`).join('\n')}`)
  await killAll(left)
}
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    void stopAll().finally(() => process.exit(130))
  })
}

let exitCode = 0
try {
  if (selectsBrowserTests()) await ensureChromium()
  // started now, awaited before the closing line: they share the CPU with the main suites
  if (typecheck) console.log('> static checks (type-check, format and lint, unused code), beside the tests')
  const checks = typecheck ? staticChecks() : Promise.resolve([])
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
  // test files each pass selected (a filter may match files of one config only; it must match some)
  let filesSelected = 0
  const failures: string[] = []
  const durations: Array<{ file: string; ms: number }> = []

  /** Runs one pass: its output as it comes, or held (`hold`) and returned; its summary read back. */
  async function runPass(pass: Pass, hold: boolean): Promise<{ code: number; summary: RunSummary | null; output: string }> {
    // one file per pass and run: test/local runs this command inside a run, beside other files
    const summaryFile = join(tmp, `vitest-summary-${passName(pass).replace(/\W+/g, '-')}-${process.pid}.json`)
    const args = [
      join('node_modules', 'vitest', 'vitest.mjs'),
      'run',
      '--config',
      pass.config,
      ...(pass.project ? ['--project', pass.project] : []),
      '--reporter=default',
      '--reporter=./scripts/lib/vitest-summary-reporter.ts',
      `--outputFile.summary=${summaryFile}`,
      ...(vitestArgs.length > 0 ? ['--passWithNoTests'] : []),
      ...(pass.config === MAIN ? mainWorkers : []),
      ...(pass.beside ? ['--maxWorkers=1'] : []),
      ...passArgs,
    ]
    // vitest's --exclude reaches the root config only, not its projects: the main config reads
    // what --quick leaves out from the environment (scripts/lib/left-out.ts)
    const passEnv = pass.config === MAIN && quickExcludes.length > 0 ? { ...env, [LEFT_OUT_ENV]: quickExcludes.join(',') } : env
    // held output keeps its colours when the terminal shows them (vitest sees a pipe)
    const held = { ...passEnv, ...(process.stdout.isTTY && passEnv.FORCE_COLOR === undefined ? { FORCE_COLOR: '1' } : {}) }
    const { code, output } = hold ? await runQuietly(process.execPath, args, held) : { code: await run(process.execPath, args, passEnv), output: '' }
    let summary: RunSummary | null = null
    try {
      summary = JSON.parse(readFileSync(summaryFile, 'utf8')) as RunSummary
    } catch {
      // vitest ended before its reporters (a crash, a config that does not load): see its output
    }
    rmSync(summaryFile, { force: true })
    return { code, summary, output }
  }

  /** Adds a pass's files and counts to the run's, by the rules of the header comment. */
  function count(pass: Pass, { code, summary }: { code: number; summary: RunSummary | null }): void {
    exitCode = exitCode || code
    if (!summary) {
      if (code !== 0 || vitestArgs.length === 0) {
        failures.push(`${passName(pass)}: exited with code ${code} before reporting`)
        totals.failed += 1
        exitCode = exitCode || 1
      }
      return
    }
    // unfiltered, every pass must select tests; filtered, one pass selecting none is fine
    // (the filter names another pass's files), all of them selecting none is not (below)
    if (summary.files.length === 0 && vitestArgs.length === 0) exitCode = exitCode || 1
    filesSelected += summary.files.length
    let failed = summary.unhandled
    for (const f of summary.files) {
      totals.passed += f.passed
      failed += f.failed
      totals.skipped += f.skipped
      durations.push({ file: f.file, ms: f.ms })
    }
    failures.push(...summary.failures)
    if (code !== 0 && failed === 0) {
      // vitest failed the pass for a reason no file shows: it must not end as "0 failed"
      failures.push(`${passName(pass)}: exited with code ${code} (see its output above)`)
      failed = 1
    }
    totals.failed += failed
  }

  const announce = (pass: Pass) =>
    console.log(
      `> ${passName(pass)}${pass.config === MAIN ? ` (${mainWorkers[0]}: load ${load.toFixed(1)} on ${cores} cores)` : ''}${pass.beside ? ' (--maxWorkers=1), beside the main suites: its output follows theirs' : ''}`,
    )
  /** each pass's wall time, printed with the run's time (which pass sets the run's length) */
  const walls: string[] = []
  const besides = passes
    .filter((p) => p.beside)
    .map((pass) => {
      announce(pass)
      const began = Date.now()
      return { pass, result: runPass(pass, true).then((r) => ({ ...r, took: Date.now() - began })) }
    })
  for (const [i, pass] of passes.filter((p) => !p.beside).entries()) {
    announce(pass)
    if (pass.config === MAIN && quickExcludes.length > 0)
      console.log(`  quick: without the whole-stack suites and the docs' CLI commands (${QUICK_LEAVES_OUT.join(', ')}); a path after -- runs any of them`)
    const began = Date.now()
    count(pass, await runPass(pass, false))
    walls.push(`  ${passName(pass)}: ${seconds(Date.now() - began)}`)
    if (i > 0) continue
    // after the main suites: the passes that ran beside them, their output in one piece each
    for (const side of besides) {
      const result = await side.result
      console.log(`> ${passName(side.pass)}: its output (it ran beside the main suites and took ${seconds(result.took)})`)
      process.stdout.write(result.output.endsWith('\n') || result.output === '' ? result.output : `${result.output}\n`)
      count(side.pass, result)
      walls.push(`  ${passName(side.pass)}: ${seconds(result.took)}, beside the main suites`)
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
  const checksFailed = await checks
  await stopLeftovers()
  // the emulators too, now, so that what is left in the run's temporary folder is named above the figures
  await stopAll()
  if (checksFailed.length > 0) {
    failures.unshift(...checksFailed.map((c) => `static check: ${c}`))
    totals.failed += checksFailed.length
    exitCode = exitCode || 1
  }
  if (durations.length > 0) {
    durations.sort((a, b) => b.ms - a.ms)
    const slowest = durations.slice(0, 10)
    const width = Math.max(...slowest.map((d) => d.file.length))
    console.log(`slowest test files (of ${durations.length}; import, set-up, tests and hooks):`)
    for (const d of slowest) console.log(`  ${d.file.padEnd(width)}  ${seconds(d.ms).padStart(10)}`)
  }
  console.log(`the run took ${seconds(Date.now() - startedAt)}${walls.length > 1 ? `; its passes:\n${walls.join('\n')}` : ''}`)
  const cpu = cpuUseSince(cpuAtStart, cores)
  if (cpu) console.log(formatCpuUse(cpu, cores))
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
