import { describe, expect, it } from 'vitest'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { OWN_PROCESS_FILES } from '../../vitest.config.ts'

const ROOT = join(import.meta.dirname, '..', '..')

/**
 * What a file may not do when the files before it in its worker share its process (vitest.config.ts,
 * project `main`, `isolate: false`): each leaves something behind for the next file.
 */
const PROCESS_WIDE: ReadonlyArray<[string, RegExp]> = [
  ['vitest module mocks', /\bvi\.(do)?mock\(/],
  ['stubbed env or globals', /\bvi\.stub(Env|Global)\(/],
  ['fake timers', /\buseFakeTimers\(/],
  ['spies on shared objects', /\bvi\.spyOn\(/],
  ['an env variable set or deleted', /process\.env(\.[A-Za-z_]+|\[[^\]]+\])\s*=[^=]|delete process\.env/],
  ['OpenTelemetry started (global providers and instrumentations)', /\bstartTelemetry\(/],
  ['process signal or exit handlers', /\bprocess\.(on|once)\(/],
  ['a global undici dispatcher', /\bsetGlobalDispatcher\(/],
  ['the working directory changed', /\bprocess\.chdir\(/],
]

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return e.name === 'reliability' || e.name === 'fixtures' ? [] : testFiles(path)
    return e.name.endsWith('.test.ts') ? [relative(ROOT, path).split('\\').join('/')] : []
  })
}

describe('the files that keep a process of their own (vitest.config.ts OWN_PROCESS_FILES)', () => {
  it('names files that exist', () => {
    expect(OWN_PROCESS_FILES.filter((f) => !existsSync(join(ROOT, f)))).toEqual([])
  })

  it('holds every file that changes something process-wide: the others share their worker', () => {
    // this file spells the patterns, as samples below
    const own = new Set([
      ...OWN_PROCESS_FILES,
      relative(ROOT, import.meta.filename)
        .split('\\')
        .join('/'),
    ])
    const shared = testFiles(join(ROOT, 'test')).filter((f) => !own.has(f))
    expect(shared.length).toBeGreaterThan(200)
    const found = shared.flatMap((f) => {
      const text = readFileSync(join(ROOT, f), 'utf8')
      return PROCESS_WIDE.filter(([, re]) => re.test(text)).map(([what]) => `${f}: ${what}`)
    })
    expect(found).toEqual([])
  })

  it('the check sees each kind (a file spelling one is caught)', () => {
    const samples = [
      "vi.mock('node:fs')",
      "vi.stubEnv('X', '1')",
      'vi.useFakeTimers()',
      'vi.spyOn(console, "log")',
      "process.env.PORT = '1'",
      "process.env['PORT'] = '1'",
      'delete process.env.PORT',
      'await startTelemetry("x", {})',
      "process.on('SIGTERM', stop)",
      'setGlobalDispatcher(agent)',
      "process.chdir('/tmp')",
    ]
    expect(samples.filter((s) => !PROCESS_WIDE.some(([, re]) => re.test(s)))).toEqual([])
    expect(PROCESS_WIDE.some(([, re]) => re.test("if (process.env.PORT === '1') {}"))).toBe(false)
  })
})
