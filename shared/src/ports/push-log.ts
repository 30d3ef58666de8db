/**
 * The inbound debugger's record of recent pushes (docs/portal.md, "Inbound debugger"): one entry
 * per answered push whose connection is known, accepted or refused. A view for the tenant, not a
 * ledger: entries are written after the answer, in batches (domain/activity/push-log.ts), and
 * bounded by count per connection and kind (`append`'s `keep`) and by age (`expire_at_ms`, a TTL
 * policy in Firestore, pruning in the embedded store).
 *
 * Two kinds, each with its own slice: an entry is *accepted* when its status is 2xx (the push was
 * taken), *refused* otherwise (401, 403, 404, 413, 429, 503, …). Anyone who knows a webhook source
 * id can make refused entries without a token (issue 31), so refused entries are kept and trimmed
 * apart: however many arrive, they never push an accepted entry out.
 */

/** How many entries of each kind a connection keeps (`append`) or a read returns (`recent`). */
export interface PushLogBounds {
  accepted: number
  refused: number
}

/** Which credential the push presented: its public parts only, never the secret. */
export interface PushCredential {
  kind: 'api_key' | 'source_token' | 'location_token' | 'none'
  /** the API key's id, or the partner CRM location id; null for a source token */
  id: string | null
  /** the key's name, or `lsk_ab12…` (its stored display prefix); the token's slot ("current", "previous") */
  label: string | null
}

export interface PushLogEntry {
  /** time-ordered and unique (domain/activity/push-log.ts pushLogEntryId) */
  id: string
  connection_id: string
  account_id: string
  /** when the answer was sent (ISO) */
  at: string
  status: number
  /** the error envelope's `error` text as the caller got it; null on success */
  error: string | null
  /** `accepted` of the 202 (or 200) answer; null when refused */
  accepted: number | null
  /** distinct top-level keys of the push's records (bounded): the page names the ones no mapping reads */
  keys: string[]
  request_id: string
  /** the trace the request's log lines carry (`logging.googleapis.com/trace`), null without one */
  trace: string | null
  credential: PushCredential
  /** when the entry may be deleted */
  expire_at_ms: number
  /** what the worker refused of the push, written back after the answer (recordOutcome); absent when it refused nothing or has not run yet */
  outcome?: PushOutcome
  /** a 400 `invalid payload`: the field it was about (absent for any other answer, and on entries written before it was kept) */
  problem?: PayloadProblem
}

/**
 * The field a push body was refused for (400 `invalid payload`) and why: the edge knows it, the
 * answer's envelope names none (contract 4.3: `{ok, error}` only), so the log line and the inbound
 * debugger do (issue 29, D12).
 */
export interface PayloadProblem {
  /** a JSON pointer into the body (`/contacts/3`), '' for the body as a whole */
  path: string
  reason: string
}

/** A record or a value of a pushed batch the worker did not store, and why. */
export interface Refusal {
  /** the record's position in the push */
  index: number
  /** the record's external_id, when it has one */
  external_id: string | null
  /** the refused value's target (`email`), null when the whole record was refused */
  field: string | null
  /** the refused value as sent (shortened), null for a whole record */
  value: string | null
  reason: string
}

/** The worker's refusals of one accepted push (its BatchApplied), joined to the entry by request id. */
export interface PushOutcome {
  /** records stored (changed or not) */
  stored: number
  /** how many records and values were refused */
  refused_count: number
  /** the first refusals, with their reasons (bounded) */
  refused: Refusal[]
  /** when the worker applied the batch (ISO) */
  at: string
}

export interface PushLog {
  /**
   * Stores entries (any connections). Afterwards each connection they name keeps at most its
   * `keep.accepted` newest accepted entries and, apart from them, its `keep.refused` newest
   * refused ones; older ones of each kind are deleted (by the time the call returns), and so may
   * be its entries expired at `nowMs`. Refused entries never count against accepted ones.
   */
  append(entries: readonly PushLogEntry[], keep: PushLogBounds, nowMs: number): Promise<void>
  /**
   * Stores the worker's outcome of the push answered with `requestId` (written once per applied
   * batch, again on a redelivery: the same outcome replaces it). It may arrive before the entry
   * itself (the edge writes entries in batches): `recent` joins the two whenever both exist.
   */
  recordOutcome(connectionId: string, requestId: string, outcome: PushOutcome, expireAtMs: number): Promise<void>
  /**
   * The connection's newest entries first: at most `limit.accepted` accepted and `limit.refused`
   * refused ones, merged in id order, none expired at `nowMs`, each with its outcome when one is
   * stored.
   */
  recent(connectionId: string, limit: PushLogBounds, nowMs: number): Promise<PushLogEntry[]>
  close(): Promise<void>
}
