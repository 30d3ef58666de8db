/**
 * Deterministic JSON for the committed generated files and the served schema: object keys
 * sorted at every depth (arrays keep their order), two-space indent, trailing newline. The same
 * input always yields the same bytes, so the drift tests can compare text.
 */
export function sortKeysDeep<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => sortKeysDeep(v)) as T
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key]
      if (v !== undefined) out[key] = sortKeysDeep(v)
    }
    return out as T
  }
  return value
}

export function canonicalJson(value: unknown): string {
  return `${JSON.stringify(sortKeysDeep(value), null, 2)}\n`
}
