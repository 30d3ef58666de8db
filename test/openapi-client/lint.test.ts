import { describe, expect, it } from 'vitest'
import { join, relative } from 'node:path'
import { OPENAPI_FILE, OPENAPI_HOST_FILES } from '@lsv/shared/contract/generated-files.ts'
import { ROOT, runNode } from './toolchain.ts'

/**
 * `redocly lint` on the committed OpenAPI documents (the whole one and each host's) with the repository's redocly.yaml
 * (recommended rules) and .redocly.lint-ignore.yaml (deliberate exceptions, each with its
 * reason): any error or warning fails. Telemetry and update checks are off: no traffic leaves
 * the machine.
 */
describe('redocly lint', () => {
  it.each([OPENAPI_FILE, OPENAPI_HOST_FILES.portal, OPENAPI_HOST_FILES.edge].map((f) => relative(ROOT, f)))(
    'reports no error and no warning on %s',
    async (file) => {
      const run = await runNode([join(ROOT, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js'), 'lint', file, '--format=json'], {
        REDOCLY_TELEMETRY: 'off',
        REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
        CI: 'true',
      })
      const report = JSON.parse(run.stdout.slice(run.stdout.indexOf('{'))) as {
        totals: { errors: number; warnings: number; ignored: number }
        problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>
      }
      const problems = report.problems
        .filter((p) => p.severity !== 'off' && !(p as { ignored?: boolean }).ignored)
        .map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`)
      expect(problems).toEqual([])
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 })
      expect(run.code, run.stderr).toBe(0)
    },
    120_000,
  )
})
