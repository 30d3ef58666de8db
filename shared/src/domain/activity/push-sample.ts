import type { PlatformDeps } from '../../ports/deps.ts'
import type { InboundRecord } from '../ingest/mapping.ts'
import { LISTENED_RECORDS, type BatchShape } from '../ingest/push-body.ts'
import { atMostCodePoints } from '../../lib/code-points.ts'

/**
 * What the portal's mapping screens know of a connection's recent pushes (docs/portal.md, "Field
 * mappings"): the first record of the last accepted push (the mapping review shows it mapped with
 * the current and the proposed mappings) and how often each top-level key appeared (the
 * connection page names the keys no mapping reads). One small note per connection beside the
 * activity counters (RateLimiter.updateNote), bounded: the record at MAX_SAMPLE_BYTES, the keys at
 * MAX_KEYS, counting restarted after COUNT_PERIOD_MS, the note gone RETENTION_MS after the last
 * push. The record is the tenant's own data as their system sent it; credentials travel in
 * headers and the query, never in the body, so none is stored.
 */

/** the sample record as JSON text; a larger first record is not kept (`record_omitted`) */
export const MAX_SAMPLE_BYTES = 16 * 1024
/** distinct keys counted per connection: the most frequent ones are kept */
const MAX_KEYS = 100
/**
 * a key longer than this (in characters: code points, as a mapping's `from` is bounded, so every
 * key a mapping can name is counted by name) is counted under `other_keys` only
 */
const MAX_KEY_LENGTH = 128
/** records of one push whose keys are counted (the first ones, all the edge tells): bounded work after a 10,000-record push */
const COUNTED_RECORDS_PER_PUSH = LISTENED_RECORDS
/** counts older than this start again: "recent pushes" */
const COUNT_PERIOD_MS = 7 * 86_400_000
/** the note lives this long after the last push */
const RETENTION_MS = 8 * 86_400_000

export interface PushSample {
  /** when the last push was accepted (ISO) */
  at: string
  shape: BatchShape
  /** the first record of the last push; null when it was over MAX_SAMPLE_BYTES */
  record: InboundRecord | null
  record_omitted: boolean
  /** counting started (ISO) */
  since: string
  pushes: number
  /** records whose keys were counted */
  records: number
  /** per top-level key as sent: the records carrying it */
  keys: Record<string, number>
  /** key occurrences not kept (over MAX_KEYS distinct keys, or a key over MAX_KEY_LENGTH) */
  other_keys: number
}

/** What one or more pushes of one connection add (gathered in memory by PushActivityRecorder). */
export interface SampleDelta {
  /** when the last of them was accepted (ms: made an ISO date once, when stored) */
  atMs: number
  shape: BatchShape
  record: InboundRecord | null
  pushes: number
  records: number
  keys: Map<string, number>
  other_keys: number
}

const pushSampleKey = (connectionId: string) => `activity:sample:${connectionId}`

/** distinct keys one flush's delta gathers in memory before counting the rest under `other_keys` */
const MAX_PENDING_KEYS = 10 * MAX_KEYS

/**
 * An accepted push (records as parsed from its body) added to its connection's pending delta, in
 * place (a new delta when there is none): the recorder owns the delta until it flushes, and a
 * copy of the key counts per push was most of the listener's cost.
 */
export function addPush(pending: SampleDelta | undefined, atMs: number, shape: BatchShape, records: readonly InboundRecord[]): SampleDelta {
  const delta = pending ?? { atMs, shape, record: null, pushes: 0, records: 0, keys: new Map(), other_keys: 0 }
  delta.atMs = atMs
  delta.shape = shape
  delta.record = records[0] ?? null
  delta.pushes++
  const counted = Math.min(records.length, COUNTED_RECORDS_PER_PUSH)
  for (let i = 0; i < counted; i++) {
    const r = records[i]
    if (r === null || typeof r !== 'object') continue
    delta.records++
    for (const k of Object.keys(r)) countKey(delta.keys, k, 1, delta)
  }
  return delta
}

function countKey(keys: Map<string, number>, key: string, by: number, into: { other_keys: number }, limit = MAX_PENDING_KEYS): void {
  if (!atMostCodePoints(key, MAX_KEY_LENGTH) || (keys.size >= limit && !keys.has(key))) {
    into.other_keys += by
    return
  }
  keys.set(key, (keys.get(key) ?? 0) + by)
}

/** The stored note with a delta applied: the newest record, counts added (or restarted), bounded. */
function mergeSample(current: PushSample | null, delta: SampleDelta, nowMs: number): PushSample {
  const fresh = current === null || Date.parse(current.since) + COUNT_PERIOD_MS <= nowMs
  const keys = new Map<string, number>(fresh ? [] : Object.entries(current.keys))
  const sum = { other_keys: (fresh ? 0 : current.other_keys) + delta.other_keys }
  for (const [k, n] of delta.keys) countKey(keys, k, n, sum, Number.POSITIVE_INFINITY)
  const ranked = [...keys].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
  for (const [, n] of ranked.slice(MAX_KEYS)) sum.other_keys += n
  const at = new Date(delta.atMs).toISOString()
  const text = delta.record === null ? '' : JSON.stringify(delta.record)
  const fits = delta.record !== null && Buffer.byteLength(text) <= MAX_SAMPLE_BYTES
  return {
    at,
    shape: delta.shape,
    record: fits ? delta.record : null,
    record_omitted: delta.record !== null && !fits,
    since: fresh ? at : current.since,
    pushes: (fresh ? 0 : current.pushes) + delta.pushes,
    records: (fresh ? 0 : current.records) + delta.records,
    // an object built from entries: a key named __proto__ stays a plain key
    keys: Object.fromEntries(ranked.slice(0, MAX_KEYS)),
    other_keys: sum.other_keys,
  }
}

function parseSample(text: string | null): PushSample | null {
  if (text === null) return null
  try {
    const v = JSON.parse(text) as PushSample
    return v && typeof v === 'object' && typeof v.since === 'string' && v.keys && typeof v.keys === 'object' ? v : null
  } catch {
    return null
  }
}

/** Writes a connection's gathered delta into its note (one atomic read-modify-write). */
export async function storeSample(deps: Pick<PlatformDeps, 'rateLimiter' | 'clock'>, connectionId: string, delta: SampleDelta): Promise<void> {
  const nowMs = deps.clock.now()
  await deps.rateLimiter.updateNote(
    pushSampleKey(connectionId),
    (text) => JSON.stringify(mergeSample(parseSample(text), delta, nowMs)),
    nowMs + RETENTION_MS,
    nowMs,
  )
}

/** The connection's note, or null when no push was accepted in the last RETENTION_MS. */
export async function readPushSample(deps: Pick<PlatformDeps, 'rateLimiter' | 'clock'>, connectionId: string): Promise<PushSample | null> {
  const [text] = await deps.rateLimiter.readNotes([pushSampleKey(connectionId)], deps.clock.now())
  return parseSample(text ?? null)
}
