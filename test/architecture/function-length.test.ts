import { execFile } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

/**
 * "No product function is over 150 lines" (issue 28), as biome.jsonc states it for `biome ci`
 * (`npm test`'s lint): the real tree has no such function, and a function one line too long is
 * reported where the rule applies (product code), not where it does not (tests, benches).
 */
const run = promisify(execFile)
const ROOT = resolve(import.meta.dirname, '..', '..')
const BIOME = join(ROOT, 'node_modules', '@biomejs', 'biome', 'bin', 'biome')
const RULE = 'lint/complexity/noExcessiveLinesPerFunction'

/** biome's lint of `paths` under `cwd` (exit code 1 when it finds an error: the output says which) */
async function lint(cwd: string, args: string[]): Promise<string> {
  const out = await run(BIOME, ['lint', ...args], { cwd, maxBuffer: 64 * 1024 * 1024 }).catch((err: { stdout?: string; stderr?: string }) => {
    if (err.stdout === undefined) throw err
    return { stdout: err.stdout, stderr: err.stderr ?? '' }
  })
  return `${out.stdout}${out.stderr}`
}

/** a function whose body (the lines between its braces) is `lines` lines long, as biome counts it */
function functionOf(lines: number): string {
  const statements = Array.from({ length: lines - 2 }, (_, i) => `  total += ${i}`)
  return ['export function long(): number {', '  let total = 0', ...statements, '  return total', '}', ''].join('\n')
}

/** the files with a long function each under the repository's biome.jsonc, in a tree of their own; returns the paths biome reports */
const trees: string[] = []
afterAll(() => {
  for (const t of trees) rmSync(t, { recursive: true, force: true })
})
async function reported(files: Record<string, number>): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'lsv-fnlen-'))
  trees.push(dir)
  copyFileSync(join(ROOT, 'biome.jsonc'), join(dir, 'biome.jsonc'))
  for (const [path, lines] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), functionOf(lines))
  }
  // not a git checkout: the configuration's ignore-file lookup is off here
  const output = await lint(dir, ['--vcs-enabled=false', '.'])
  return Object.keys(files).filter((path) => output.includes(`${path}:1:8 ${RULE}`))
}

describe('function length (biome noExcessiveLinesPerFunction, maxLines 150)', () => {
  it('no product function is over 150 lines', async () => {
    const output = await lint(ROOT, ['shared/src', 'services'])
    expect(output.split('\n').filter((line) => line.includes(RULE))).toEqual([])
  }, 120_000)

  it('a product function of 151 lines is reported, one of 150 is not; tests and benches are exempt', async () => {
    const found = await reported({
      'shared/src/domain/over.ts': 151,
      'shared/src/domain/at.ts': 150,
      'services/edge-ingest/src/over.ts': 151,
      'test/ingest/over.test.ts': 151,
      'bench/over.ts': 151,
    })
    expect(found.sort()).toEqual(['services/edge-ingest/src/over.ts', 'shared/src/domain/over.ts'])
  }, 60_000)
})
