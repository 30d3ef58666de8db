import { describe, expect, it } from 'vitest'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * docs/deployed-shape.md is the fidelity table: every documented Google Cloud behaviour the
 * platform depends on, whether `npm run start:cloud` plays it, its source and the test that shows
 * it. A row claimed as played must name a test that exists, and every row must name its source,
 * so the table cannot drift into claims nothing checks.
 */
const ROOT = join(import.meta.dirname, '..', '..')
const TABLE = join(ROOT, 'docs', 'deployed-shape.md')
const HEADER = ['Behaviour', 'Google Cloud (source)', 'start:cloud plays it?', 'Test']

interface Row {
  section: string
  cells: string[]
}

/** the rows of every table whose header is HEADER, with the `##` section each sits in */
function tableRows(markdown: string): Row[] {
  const rows: Row[] = []
  let section = ''
  let inTable = false
  for (const line of markdown.split('\n')) {
    if (line.startsWith('## ')) section = line.slice(3).trim()
    if (!line.startsWith('|')) {
      inTable = false
      continue
    }
    // cells split on pipes that are not inside backticks (a cell may quote `a|b`)
    const cells = line
      .slice(1, -1)
      .split(/\|(?=(?:[^`]*`[^`]*`)*[^`]*$)/)
      .map((c) => c.trim())
    if (cells.join('|') === HEADER.join('|')) {
      inTable = true
      continue
    }
    if (!inTable || cells.every((c) => /^-+$/.test(c))) continue
    rows.push({ section, cells })
  }
  return rows
}

/** test files a cell names (`test/….test.ts`) */
function namedTests(cell: string): string[] {
  return [...cell.matchAll(/`?(test\/[\w./-]+\.test\.ts)`?/g)].map((m) => m[1]!)
}

describe('the fidelity table (docs/deployed-shape.md)', () => {
  const rows = tableRows(readFileSync(TABLE, 'utf8'))

  it('covers the behaviours issue 20 names, each in a table of four columns', () => {
    expect(rows.length).toBeGreaterThan(30)
    for (const row of rows) expect(row.cells, `${row.section}: ${row.cells[0]}`).toHaveLength(4)
    const sections = new Set(rows.map((r) => r.section))
    for (const s of [
      "Cloud Run's front end (authentication and ingress)",
      'Cloud Run limits and lifecycle',
      'Pub/Sub push',
      'Cloud Tasks',
      'Secret Manager',
      'The load balancer',
    ]) {
      expect(sections, s).toContain(s)
    }
    const text = rows.map((r) => r.cells[0]).join('\n')
    for (const behaviour of [
      'SIGNATURE_REMOVED_BY_GOOGLE',
      'invoker',
      'Ingress',
      '32 MiB',
      'timeout',
      'SIGTERM',
      'Dispatch deadline',
      'Retry-After',
      'dead-letter',
      'X-Forwarded-For',
      'wildcard',
      'newly created queue',
    ]) {
      expect(text, behaviour).toContain(behaviour)
    }
  })

  // mutation: a row "yes" with "—" in its Test column, or a renamed test file
  it('every row that start:cloud plays (yes or partly) names a test file that exists', () => {
    const missing: string[] = []
    for (const { section, cells } of rows) {
      const [behaviour, , plays, test] = cells as [string, string, string, string]
      const played = /^(yes|partly)\b/i.test(plays)
      const tests = namedTests(test)
      if (played && tests.length === 0) missing.push(`${section}: "${behaviour.slice(0, 60)}" is played but names no test`)
      for (const t of tests) if (!existsSync(join(ROOT, t))) missing.push(`${section}: ${t} does not exist`)
    }
    expect(missing).toEqual([])
  })

  it('every row names its source and says whether it is played', () => {
    for (const { section, cells } of rows) {
      const [behaviour, source, plays] = cells as [string, string, string]
      expect(source.length, `${section}: ${behaviour}`).toBeGreaterThan(5)
      expect(plays, `${section}: ${behaviour}`).toMatch(/^(yes|partly|no|differs on purpose)\b/i)
    }
  })

  it('the parser sees a played row without a test (control)', () => {
    const broken = `## X\n\n| ${HEADER.join(' | ')} |\n|---|---|---|---|\n| a | b | yes | — |\n`
    const [row] = tableRows(broken)
    expect(row?.cells[2]).toBe('yes')
    expect(namedTests(row?.cells[3] ?? '')).toEqual([])
  })
})
