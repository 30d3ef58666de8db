import { randomBytes } from 'node:crypto'
import type { PlatformDeps } from '../../ports/deps.ts'
import type { PayloadProblem, PushCredential, PushLogBounds, PushLogEntry } from '../../ports/push-log.ts'
import type { PushAnswered, PushListener } from '../../ports/listeners.ts'
import type { InboundRecord } from '../ingest/mapping.ts'
import { LISTENED_RECORDS } from '../ingest/push-body.ts'
import { traceContextOf, traceLogFields } from '../../logging/trace.ts'
import { refusedCap } from './refused-cap.ts'

/**
 * The inbound debugger's recent pushes (docs/portal.md, "Inbound debugger"): per connection, the
 * last KEEP.accepted accepted and, apart from them, the last KEEP.refused refused pushes of the
 * last RETENTION_MS. Refused pushes have their own slice (ports/push-log.ts) and a per-minute cap
 * (refused-cap.ts): anyone who knows a webhook source id can make them without a token, and they
 * must never push an accepted entry out (issue 31: 110 requests in 2.7 s replaced all 100).
 *
 * Recorded after the answer is sent (the edge's onResponse), gathered in memory and written every
 * FLUSH_EVERY_MS in one append: the push path gains a map insert, never a store write, so a 202
 * still waits only for the batch to be durable (the entry is a view of that answer, not part of
 * it; an instance that dies loses at most its last FLUSH_EVERY_MS of entries, never a batch).
 * Refused pushes are recorded only once their connection is known, and only their answer and
 * public credential parts: never a body of an unauthenticated caller, never a secret. The
 * memory is bounded before authentication too: per connection at most KEEP pending entries of
 * each kind (older pending ones of that kind give way) and MAX_PENDING_CONNECTIONS connections
 * per flush.
 */
const KEEP: PushLogBounds = { accepted: 100, refused: 100 }
export const PUSH_LOG_RETENTION_MS = 7 * 86_400_000
const RETENTION_MS = PUSH_LOG_RETENTION_MS
const RETENTION_DAYS = RETENTION_MS / 86_400_000
export const PUSH_LOG_BOUNDS = `the last ${KEEP.accepted} pushes of the last ${RETENTION_DAYS} days that were accepted, and apart from them the last ${KEEP.refused} that were refused`
const FLUSH_EVERY_MS = 2_000
const MAX_PENDING_CONNECTIONS = 1_000
/** distinct top-level keys kept per entry, from at most KEY_SCAN_RECORDS records (all the edge tells) */
const MAX_KEYS = 50
const MAX_KEY_LENGTH = 128
const KEY_SCAN_RECORDS = LISTENED_RECORDS

/** this process's ids' tail, drawn again only when the sequence below could repeat */
let tag = randomBytes(4).toString('hex')
let lastMs = -1
let sequence = 0
/**
 * Time-ordered, unique across instances, sorting as text: the milliseconds, a sequence within
 * the millisecond and a random tag drawn per process (not per entry: a synchronous OpenSSL call
 * each was 3 % of a small push's CPU, docs/performance.md "Fourth pass"). A clock that steps
 * back, or more than 65,536 entries in one millisecond, could repeat a (milliseconds, sequence)
 * pair of this process: the tag is drawn again then, so no id repeats.
 */
export function pushLogEntryId(nowMs: number): string {
  if (nowMs > lastMs) {
    lastMs = nowMs
    sequence = 0
  } else if (nowMs === lastMs && sequence < 0xffff) sequence++
  else {
    tag = randomBytes(4).toString('hex')
    lastMs = nowMs
    sequence = 0
  }
  return `${String(nowMs).padStart(13, '0')}-${sequence.toString(16).padStart(4, '0')}${tag}`
}

/** The distinct top-level keys of a push's records, bounded (first records, first keys). */
function keysOf(records: readonly InboundRecord[]): string[] {
  const keys = new Set<string>()
  for (const r of records.slice(0, KEY_SCAN_RECORDS)) {
    if (r === null || typeof r !== 'object') continue
    for (const k of Object.keys(r)) {
      if (keys.size >= MAX_KEYS) return [...keys]
      if (k.length <= MAX_KEY_LENGTH) keys.add(k)
    }
  }
  return [...keys]
}

/** What the edge knows of one answered push (the recorder adds id, time, trace and expiry). */
interface AnsweredPush {
  connectionId: string
  accountId: string
  status: number
  error: string | null
  accepted: number | null
  keys: string[]
  requestId: string
  headers: Record<string, string | string[] | undefined>
  credential: PushCredential
  problem: PayloadProblem | null
}

type RecorderDeps = Pick<PlatformDeps, 'pushLog' | 'counters' | 'clock' | 'logger' | 'config'>

class PushLogRecorder {
  #pending = new Map<string, { accepted: PushLogEntry[]; refused: PushLogEntry[] }>()
  #timer: NodeJS.Timeout | null = null
  #flushing: Promise<void> = Promise.resolve()
  readonly #deps: RecorderDeps
  readonly #refusedCap: ReturnType<typeof refusedCap>

  constructor(deps: RecorderDeps) {
    this.#deps = deps
    this.#refusedCap = refusedCap(deps)
  }

  record(p: AnsweredPush): void {
    const nowMs = this.#deps.clock.now()
    const kind = p.status >= 200 && p.status < 300 ? 'accepted' : 'refused'
    // over the minute's cap a refusal is counted, not recorded (refused-cap.ts)
    if (kind === 'refused' && !this.#refusedCap.admit(p.connectionId, nowMs)) return
    let pending = this.#pending.get(p.connectionId)
    if (!pending) {
      if (this.#pending.size >= MAX_PENDING_CONNECTIONS) return
      pending = { accepted: [], refused: [] }
      this.#pending.set(p.connectionId, pending)
    }
    const list = pending[kind]
    // what the request's log lines carry as logging.googleapis.com/trace; without a project (npm
    // start) the lines carry none, and the bare trace id is what a tracing backend would show
    const context = traceContextOf(p.headers)
    const trace = traceLogFields(context, this.#deps.config.gcpProject)['logging.googleapis.com/trace'] ?? context?.traceId
    list.push({
      id: pushLogEntryId(nowMs),
      connection_id: p.connectionId,
      account_id: p.accountId,
      at: new Date(nowMs).toISOString(),
      status: p.status,
      error: p.error,
      accepted: p.accepted,
      keys: p.keys,
      request_id: p.requestId,
      trace: typeof trace === 'string' ? trace : null,
      credential: p.credential,
      expire_at_ms: nowMs + RETENTION_MS,
      ...(p.problem ? { problem: p.problem } : {}),
    })
    // only the newest KEEP of each kind could survive the store's trim anyway
    if (list.length > KEEP[kind]) list.shift()
    if (!this.#timer) {
      this.#timer = setTimeout(() => {
        this.#timer = null
        void this.flush()
      }, FLUSH_EVERY_MS)
      this.#timer.unref()
    }
  }

  /** Writes what is gathered in one append (and the count of unrecorded refusals); a failure is logged and the entries dropped. */
  flush(): Promise<void> {
    const entries = [...this.#pending.values()].flatMap((p) => [...p.accepted, ...p.refused])
    this.#pending.clear()
    const counted = this.#refusedCap.flush()
    if (entries.length === 0) return Promise.all([this.#flushing, counted]).then(() => {})
    this.#flushing = this.#flushing.then(() =>
      this.#deps.pushLog.append(entries, KEEP, this.#deps.clock.now()).catch((err: unknown) => {
        this.#deps.logger.warn({ err, entries: entries.length }, 'recent pushes not stored')
      }),
    )
    return Promise.all([this.#flushing, counted]).then(() => {})
  }

  async close(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = null
    await this.flush()
  }
}

/**
 * The inbound debugger as a listener of the edge's answers: every answer to a push whose
 * connection is known (ports/listeners.ts PushAnswered).
 *
 * Failure contract: onPushAnswered is a map insert and never throws; a failed append is logged
 * and its entries dropped (a view, not a ledger); an instance that dies loses at most its last
 * FLUSH_EVERY_MS of entries, never a batch.
 */
export function pushLogListener(deps: RecorderDeps): PushListener & { flush(): Promise<void> } {
  const recorder = new PushLogRecorder(deps)
  return {
    name: 'inbound debugger (push log)',
    onPushAnswered(o: PushAnswered) {
      if (o.accountId === null || o.connection === null) return
      recorder.record({
        connectionId: o.connection.id,
        accountId: o.accountId,
        status: o.status,
        error: o.status >= 400 ? o.error : null,
        accepted: o.accepted?.count ?? null,
        keys: o.accepted ? keysOf(o.accepted.records) : [],
        requestId: o.requestId,
        headers: o.headers,
        credential: o.connection.credential,
        problem: o.status === 400 ? (o.problem ?? null) : null,
      })
    },
    flush: () => recorder.flush(),
  }
}

/** The connection's recent pushes, accepted and refused, newest first. */
export function readRecentPushes(deps: Pick<PlatformDeps, 'pushLog' | 'clock'>, connectionId: string): Promise<PushLogEntry[]> {
  return deps.pushLog.recent(connectionId, KEEP, deps.clock.now())
}
