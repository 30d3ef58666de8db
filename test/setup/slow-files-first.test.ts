import { describe, expect, it } from 'vitest'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { TestSpecification, Vitest } from 'vitest/node'
import SlowFilesFirst, { SLOW_FILES } from './slow-files-first.ts'

const ROOT = join(import.meta.dirname, '..', '..')

/** the parts of a vitest file specification the sequencers read, for a file of this repository */
function spec(file: string, groupOrder = 0): TestSpecification {
  return {
    moduleId: join(ROOT, file),
    project: { name: groupOrder === 0 ? 'first' : 'second', config: { root: ROOT, isolate: true, sequence: { groupOrder } } },
  } as unknown as TestSpecification
}

/** a run on a clean clone: vitest's cache knows no file's duration */
const sequencer = new SlowFilesFirst({ cache: { getTestSpecificationResult: () => undefined } } as unknown as Vitest)
const order = async (specs: TestSpecification[]) => (await sequencer.sort(specs)).map((s) => s.moduleId.slice(ROOT.length + 1))

describe('the known-slow files the sequencer starts first (test/setup/slow-files-first.ts)', () => {
  it('names test files that exist, slowest first', () => {
    const files = Object.keys(SLOW_FILES)
    expect(files.filter((f) => !f.endsWith('.test.ts') || !existsSync(join(ROOT, f)))).toEqual([])
    const seconds = Object.values(SLOW_FILES)
    expect(seconds).toEqual([...seconds].sort((a, b) => b - a))
  })

  it('starts them first, slowest first, ahead of larger files it knows nothing of; a later group stays later', async () => {
    // test/portal/screens-connections.test.ts is unknown here and larger: vitest alone orders by file size
    const files = ['test/portal/screens-connections.test.ts', 'test/browser/endpoints.test.ts', 'test/browser/axe-every-screen-first-half.test.ts']
    expect(await order(files.map((f) => spec(f)))).toEqual([
      'test/browser/axe-every-screen-first-half.test.ts',
      'test/browser/endpoints.test.ts',
      'test/portal/screens-connections.test.ts',
    ])
    expect(await order([spec('test/reliability/webhook-receivers.test.ts', 1), spec('test/reliability/fuzz.test.ts', 0)])).toEqual([
      'test/reliability/fuzz.test.ts',
      'test/reliability/webhook-receivers.test.ts',
    ])
  })
})
