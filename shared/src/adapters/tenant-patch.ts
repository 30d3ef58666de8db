/**
 * Shared by both tenant-store adapters so that patch semantics cannot drift: a patch replaces the
 * given top-level fields; `undefined` values and the identity fields (ids, keys, created_at) are ignored.
 */
const IMMUTABLE = new Set(['id', 'account_id', 'created_at', 'location_id', 'key'])

export function applyPatch<T extends object>(current: T, patch: object): T {
  const next = { ...current } as Record<string, unknown>
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined || IMMUTABLE.has(field)) continue
    next[field] = value
  }
  return next as T
}

/** Public ids are DNS labels and compare case-insensitively: stored and looked up lower-case. */
export function normalizePublicId(publicId: string): string {
  return publicId.toLowerCase()
}

/** Deliveries are kept this long (the TTL policy on `expire_at` removes them afterwards). */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3600 * 1000
