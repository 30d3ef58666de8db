/**
 * The vitest reporter scripts/run-tests.ts reads back (besides vitest's own output): per test file
 * its wall time and its counts, written as JSON to the file given as `outputFile`.
 *
 * A test whose suite (or file) failed in its set-up is counted as failed, not skipped: vitest marks
 * the tests under a throwing `beforeAll` "skipped", and a file that cannot even be imported has no
 * test at all, so counting vitest's states alone turned a suite that could not start (a browser
 * that is missing, an emulator that refused) into "0 failed". Here:
 * - a test that was meant to run (mode `run`/`only`, not `skip`/`todo`) but did not, under a suite
 *   or file that failed, is a failed test;
 * - a file that failed with no failed test of its own (an import error, an `afterAll` that threw)
 *   is one failure;
 * - each error vitest reports outside every file (an unhandled rejection) is one failure.
 * A file's time is vitest's preparation, import and set-up of it plus its tests and hooks, so a
 * file whose `beforeAll` starts a stack is charged for it.
 */
import { writeFileSync } from 'node:fs'
import { relative } from 'node:path'
import type { Reporter, TestCase, TestModule, Vitest } from 'vitest/node'
import type { SerializedError } from 'vitest'

interface FileSummary {
  file: string
  ms: number
  passed: number
  failed: number
  skipped: number
}

export interface RunSummary {
  files: FileSummary[]
  /** one line per failure: `<file> > <test>: <first line of the error>` */
  failures: string[]
  /** errors outside every test file */
  unhandled: number
}

/** the first line of an error message, bounded (the whole text is in vitest's own output) */
function firstLine(text: string | undefined): string {
  return (text ?? '').split('\n')[0]!.slice(0, 300)
}

/** whether the test was meant to run but a suite or the file around it failed before it could */
function failedInSetUp(test: TestCase): boolean {
  if (test.options.mode === 'skip' || test.options.mode === 'todo') return false
  for (let p: TestCase['parent'] | undefined = test.parent; p; p = p.type === 'module' ? undefined : p.parent) {
    if (p.state() === 'failed') return true
  }
  return false
}

export default class SummaryReporter implements Reporter {
  private outputFile = ''
  private root = process.cwd()

  /** the file comes from `--outputFile.summary=<path>` */
  onInit(vitest: Vitest): void {
    const outputFile = vitest.config.outputFile
    const file = typeof outputFile === 'object' ? outputFile.summary : undefined
    if (!file) throw new Error('the summary reporter needs --outputFile.summary=<path>')
    this.outputFile = file
    this.root = vitest.config.root
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const summary: RunSummary = { files: [], failures: [], unhandled: unhandledErrors.length }
    for (const e of unhandledErrors) summary.failures.push(`(outside any test file): ${firstLine(e.message)}`)
    for (const module of modules) {
      const file = relative(this.root, module.moduleId)
      const d = module.diagnostic()
      const entry: FileSummary = {
        file,
        ms: Math.round(d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration),
        passed: 0,
        failed: 0,
        skipped: 0,
      }
      let setUpNamed = false
      for (const test of module.children.allTests()) {
        const result = test.result()
        if (result.state === 'passed') entry.passed++
        else if (result.state === 'failed') {
          entry.failed++
          summary.failures.push(`${file} > ${test.fullName}: ${firstLine(result.errors[0]?.message)}`)
        } else if (failedInSetUp(test)) {
          entry.failed++
          if (!setUpNamed) summary.failures.push(`${file} > ${test.fullName}: did not run, its set-up failed: ${firstLine(setUpError(test))}`)
          setUpNamed = true
        } else entry.skipped++
      }
      if (module.state() === 'failed' && entry.failed === 0) {
        entry.failed = 1
        summary.failures.push(`${file}: ${firstLine(module.errors()[0]?.message)}`)
      }
      summary.files.push(entry)
    }
    writeFileSync(this.outputFile, `${JSON.stringify(summary, null, 2)}\n`)
  }
}

/** the error of the nearest suite (or the file) that failed around the test */
function setUpError(test: TestCase): string | undefined {
  for (let p: TestCase['parent'] | undefined = test.parent; p; p = p.type === 'module' ? undefined : p.parent) {
    const message = p.errors()[0]?.message
    if (message) return message
  }
  return undefined
}
