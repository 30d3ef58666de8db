import { existsSync, readdirSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { createTestDeps } from '../helpers/deps.ts'
import { tempDataDir, tempDataDirsMade } from '../helpers/embedded.ts'

/**
 * The harness's data folders (test/helpers/deps.ts): a test run left nine of them a run in the
 * machine's temporary folder (2026-11-29), among them one per call made with the caller's own
 * DATA_DIR, which the harness created and never used.
 */
describe('createTestDeps and its data folder', () => {
  it('makes a folder of its own and removes it on cleanup()', async () => {
    const before = tempDataDirsMade()
    const deps = await createTestDeps()
    expect(tempDataDirsMade()).toBe(before + 1)
    expect(existsSync(deps.config.dataDir)).toBe(true)
    await deps.cleanup()
    expect(existsSync(deps.config.dataDir)).toBe(false)
  })

  it("makes none when the caller gives its DATA_DIR, and leaves the caller's in place", async () => {
    const own = tempDataDir('lsv-harness-')
    try {
      const before = tempDataDirsMade()
      const deps = await createTestDeps({ env: { DATA_DIR: own.dir } })
      expect(deps.config.dataDir).toBe(own.dir)
      expect(tempDataDirsMade()).toBe(before)
      await deps.cleanup()
      expect(readdirSync(own.dir).length).toBeGreaterThan(0)
    } finally {
      own.cleanup()
    }
  })
})
