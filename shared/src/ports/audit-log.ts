/**
 * The audit log: what was changed in an account through the portal (docs/portal.md, "Audit
 * log"). Append-only; read newest first with keyset paging. Entries never hold a secret: the
 * domain (domain/audit/record.ts) checks what it is given before it reaches a store.
 */

/** A target or detail value: identifiers, names, numbers and flags only. */
export type AuditValue = string | number | boolean | null

export interface AuditEntry {
  /** time-ordered and unique: 13-digit milliseconds, '-', 16 hex digits (sorts as time does) */
  id: string
  account_id: string
  /** ISO 8601 */
  at: string
  /** who: `portal session <12 hex digits of its stored hash>` */
  actor: string
  /** what: a dotted verb, e.g. `api_key.create` */
  action: string
  /** which: the ids acted on, e.g. `{connection_id, key_id}` */
  target: Record<string, string>
  /** anything else worth keeping that is not a secret (scopes, grace seconds, counts) */
  details: Record<string, AuditValue | AuditValue[]>
}

export interface AuditPage {
  data: AuditEntry[]
  /** the id to pass as `before` for the next (older) page, or null at the end */
  next_before: string | null
  /**
   * the id to pass as `after` for the previous (newer) page, or null when the page is the newest
   * (a portal's "Newer" link: issue 22, tables of 10,000 rows page both ways)
   */
  newer_after: string | null
}

export interface AuditLogStore {
  append(entry: AuditEntry): Promise<void>
  /**
   * The account's entries with ids strictly below `before` (all when absent), newest first; or,
   * with `after` instead, the `limit` entries just above `after` (the newer page), still newest
   * first. Both directions read at most `limit` + 1 entries and one more to probe the other side.
   */
  list(accountId: string, options: { before?: string; after?: string; limit: number }): Promise<AuditPage>
  close(): Promise<void>
}
