import { describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { configurationTable, TABLE_END, TABLE_START, withConfigurationTable } from '@lsv/shared/config/readme-table.ts'
import { VARIABLE_NAMES } from '@lsv/shared/config/environment.ts'

/** README.md's configuration table is the one generated from the schema (npm run generate). */
const README = join(import.meta.dirname, '..', '..', 'README.md')

describe('README configuration table', () => {
  it('equals the table generated from shared/src/config/environment.ts', () => {
    const committed = readFileSync(README, 'utf8')
    expect(committed.includes(TABLE_START) && committed.includes(TABLE_END), 'README.md lost its configuration table markers').toBe(true)
    expect(withConfigurationTable(committed) === committed, 'README.md configuration table is stale: run npm run generate').toBe(true)
  })

  it('has one row per variable of the schema, and only those', () => {
    const committed = readFileSync(README, 'utf8')
    const table = committed.slice(committed.indexOf(TABLE_START), committed.indexOf(TABLE_END))
    const names = [...table.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1])
    expect(names).toEqual(VARIABLE_NAMES)
    expect(table).toContain(configurationTable())
  })

  it('a changed schema makes the committed README stale', () => {
    const committed = readFileSync(README, 'utf8')
    const edited = committed.replace('| `DATA_DIR` | a folder | `.data` |', '| `DATA_DIR` | a folder | `.elsewhere` |')
    expect(edited).not.toBe(committed)
    expect(withConfigurationTable(edited)).toBe(committed)
    expect(() => withConfigurationTable('# no markers')).toThrow(/markers/)
  })
})
