import { describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { LEFT_OUT_ENV } from '../../scripts/lib/left-out.ts'

const ROOT = join(import.meta.dirname, '..', '..')

/** the files the main config selects (both projects), as `vitest list` prints them */
async function listed(env: NodeJS.ProcessEnv): Promise<string[]> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join('node_modules', 'vitest', 'vitest.mjs'), 'list', '--filesOnly', '--config', 'vitest.config.ts'],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      maxBuffer: 16 * 1024 * 1024,
    },
  )
  return stdout
    .split('\n')
    .map((l) => l.replace(/^\[[^\]]+\]\s*/, '').trim())
    .filter((l) => l.endsWith('.test.ts'))
}

describe('what a run leaves out (npm run test:quick; scripts/lib/left-out.ts)', () => {
  it('leaves the named globs out of both projects, the files of its own process included', async () => {
    const all = await listed({ [LEFT_OUT_ENV]: '' })
    expect(all).toContain('test/browser/portal.test.ts')
    expect(all).toContain('test/logging/telemetry.test.ts')
    const quick = await listed({ [LEFT_OUT_ENV]: 'test/browser/**,test/logging/telemetry.test.ts' })
    expect(quick.filter((f) => f.startsWith('test/browser/') || f === 'test/logging/telemetry.test.ts')).toEqual([])
    expect(quick.length).toBe(all.filter((f) => !f.startsWith('test/browser/') && f !== 'test/logging/telemetry.test.ts').length)
  }, 60_000)
})
