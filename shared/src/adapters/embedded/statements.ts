import type { DatabaseSync, SQLInputValue } from 'node:sqlite'

/** Reads and writes of records kept as JSON in a `data` column, over statements compiled once. */
export interface JsonStatements {
  prepare(sql: string): ReturnType<DatabaseSync['prepare']>
  /** the record of the first row, or null */
  one<T>(sql: string, ...params: SQLInputValue[]): T | null
  /** the records of every row */
  many<T>(sql: string, ...params: SQLInputValue[]): T[]
  run(sql: string, ...params: SQLInputValue[]): void
}

/** Statements are compiled once per SQL text: preparing is most of a point read's cost. */
export function jsonStatements(db: DatabaseSync): JsonStatements {
  const statements = new Map<string, ReturnType<DatabaseSync['prepare']>>()
  const prepare = (sql: string) => {
    let st = statements.get(sql)
    if (!st) statements.set(sql, (st = db.prepare(sql)))
    return st
  }
  return {
    prepare,
    one<T>(sql: string, ...params: SQLInputValue[]): T | null {
      const row = prepare(sql).get(...params) as { data: string } | undefined
      return row ? (JSON.parse(row.data) as T) : null
    },
    many<T>(sql: string, ...params: SQLInputValue[]): T[] {
      return (prepare(sql).all(...params) as Array<{ data: string }>).map((r) => JSON.parse(r.data) as T)
    },
    run(sql: string, ...params: SQLInputValue[]): void {
      prepare(sql).run(...params)
    },
  }
}
