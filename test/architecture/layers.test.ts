import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

/**
 * The layers of shared/src (docs/architecture.md, "Layers"), as .dependency-cruiser.cjs states
 * them: the real tree breaks no rule, and each rule, shown a tree that breaks it, reports it (so a
 * rule that stopped matching, a path typo, would not pass for a clean tree).
 */
const run = promisify(execFile)
const ROOT = resolve(import.meta.dirname, '..', '..')
const CONFIG = join(ROOT, '.dependency-cruiser.cjs')
const CLI = join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs')

interface Violation {
  rule: { name: string }
  from: string
  to: string
}

async function cruise(cwd: string, paths: string[]): Promise<Violation[]> {
  // exit code = number of violations: the JSON on stdout says which
  const out = await run(process.execPath, [CLI, '--config', CONFIG, '--output-type', 'json', ...paths], { cwd, maxBuffer: 64 * 1024 * 1024 }).catch(
    (err: { stdout?: string; stderr?: string }) => {
      if (!err.stdout) throw new Error(`dependency-cruiser failed: ${err.stderr}`)
      return { stdout: err.stdout }
    },
  )
  return (JSON.parse(out.stdout) as { summary: { violations: Violation[] } }).summary.violations
}

describe('import boundaries (dependency-cruiser)', () => {
  it('the code breaks no layer rule', async () => {
    const violations = await cruise(ROOT, ['shared/src', 'services', 'scripts'])
    expect(violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)).toEqual([])
  }, 120_000)

  const trees: string[] = []
  afterAll(() => {
    for (const t of trees) rmSync(t, { recursive: true, force: true })
  })
  /** a tree of .ts files: path -> the paths it imports (relative imports written for it) */
  function tree(files: Record<string, { imports?: string[]; typeImports?: string[] }>): string {
    const dir = mkdtempSync(join(tmpdir(), 'lsv-layers-'))
    trees.push(dir)
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', allowImportingTsExtensions: true, noEmit: true } }),
    )
    const rel = (from: string, to: string) => {
      const r = join(...Array(from.split('/').length - 1).fill('..'), to)
      return r.startsWith('.') ? r : `./${r}`
    }
    for (const [path, { imports = [], typeImports = [] }] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true })
      const lines = [
        ...imports.map((to, i) => `import { v${i} } from '${rel(path, to)}'\nconsole.log(v${i})`),
        ...typeImports.map((to, i) => `import type { T${i} } from '${rel(path, to)}'\nexport type U${i} = T${i}`),
        'export const v = 1\nexport type T = number',
      ]
      writeFileSync(join(dir, path), `${lines.join('\n')}\n`)
    }
    return dir
  }

  const cases: Array<[rule: string, files: Record<string, { imports?: string[]; typeImports?: string[] }>]> = [
    ['model-imports-nothing', { 'shared/src/model/a.ts': { typeImports: ['shared/src/contract/b.ts'] }, 'shared/src/contract/b.ts': {} }],
    ['foundation-stays-low', { 'shared/src/contract/a.ts': { imports: ['shared/src/domain/b.ts'] }, 'shared/src/domain/b.ts': {} }],
    ['ports-are-interfaces', { 'shared/src/ports/a.ts': { typeImports: ['shared/src/domain/b.ts'] }, 'shared/src/domain/b.ts': {} }],
    ['ports-are-types-only', { 'shared/src/domain/a.ts': { imports: ['shared/src/ports/b.ts'] }, 'shared/src/ports/b.ts': {} }],
    ['adapters-below-domain', { 'shared/src/adapters/a.ts': { imports: ['shared/src/domain/b.ts'] }, 'shared/src/domain/b.ts': {} }],
    ['domain-uses-ports', { 'shared/src/domain/a.ts': { imports: ['shared/src/adapters/b.ts'] }, 'shared/src/adapters/b.ts': {} }],
    ['domain-uses-ports', { 'shared/src/domain/a.ts': { typeImports: ['shared/src/platform/b.ts'] }, 'shared/src/platform/b.ts': {} }],
    ['http-uses-domain', { 'shared/src/http/a.ts': { imports: ['shared/src/adapters/b.ts'] }, 'shared/src/adapters/b.ts': {} }],
    ['shared-is-shared', { 'shared/src/lib/a.ts': { imports: ['services/x/src/b.ts'] }, 'services/x/src/b.ts': {} }],
    ['services-compose-through-platform', { 'services/x/src/a.ts': { imports: ['shared/src/adapters/b.ts'] }, 'shared/src/adapters/b.ts': {} }],
    ['services-are-separate', { 'services/x/src/a.ts': { imports: ['services/y/src/b.ts'] }, 'services/y/src/b.ts': {} }],
    ['no-cycles', { 'shared/src/domain/a.ts': { imports: ['shared/src/domain/b.ts'] }, 'shared/src/domain/b.ts': { imports: ['shared/src/domain/a.ts'] } }],
  ]
  it.concurrent.each(cases)(
    '%s: a tree that breaks it is reported',
    async (rule, files) => {
      const dir = tree(files)
      const violations = await cruise(
        dir,
        ['shared', 'services'].filter((p) => Object.keys(files).some((f) => f.startsWith(p))),
      )
      expect(violations.map((v) => v.rule.name)).toContain(rule)
    },
    60_000,
  )

  it('a tree that follows the layers reports nothing (the cases above fail for their rule, not for any import)', async () => {
    const dir = tree({
      'shared/src/model/r.ts': {},
      'shared/src/contract/c.ts': { typeImports: ['shared/src/model/r.ts'] },
      'shared/src/ports/p.ts': { typeImports: ['shared/src/model/r.ts'] },
      'shared/src/adapters/a.ts': { typeImports: ['shared/src/ports/p.ts'], imports: ['shared/src/model/r.ts'] },
      'shared/src/domain/d.ts': { typeImports: ['shared/src/ports/p.ts'], imports: ['shared/src/contract/c.ts'] },
      'shared/src/http/h.ts': { imports: ['shared/src/domain/d.ts'] },
      'shared/src/platform/c.ts': { imports: ['shared/src/adapters/a.ts', 'shared/src/http/h.ts'] },
      'services/x/src/s.ts': { imports: ['shared/src/platform/c.ts', 'shared/src/domain/d.ts'] },
    })
    expect(await cruise(dir, ['shared', 'services'])).toEqual([])
  }, 60_000)
})
