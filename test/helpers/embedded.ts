import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'

let made = 0
/** how many folders tempDataDir made in this process (test/setup/test-deps-folders.test.ts) */
export const tempDataDirsMade = () => made

/**
 * The test file that asked, as `<name>-`, from the stack: a folder left behind names its maker in
 * `npm test`'s list of leftovers (scripts/run-tests.ts). Empty when no test file is on the stack.
 */
function askingTestFile(): string {
  const frame = new Error().stack?.split('\n').find((line) => /\.test\.ts:\d+/.test(line))
  const name = frame ? /([\w.-]+)\.test\.ts:\d+/.exec(frame)?.[1] : undefined
  return name ? `${name}-` : ''
}

/** A fresh data folder for one test file, named after it; removed by the returned cleanup. */
export function tempDataDir(prefix = 'lsv-test-'): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}${askingTestFile()}`))
  made++
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }) }
}

/** Random ids so tests sharing an emulator never collide. */
export function randomSuffix(bytes = 6): string {
  return randomBytes(bytes).toString('hex')
}

export const emulators = {
  firestore: process.env.FIRESTORE_EMULATOR_HOST ?? null,
  pubsub: process.env.PUBSUB_EMULATOR_HOST ?? null,
  project: process.env.EMULATOR_PROJECT ?? 'demo-lsv-test',
}
