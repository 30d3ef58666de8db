import type { PlatformDeps } from '../../ports/deps.ts'

/**
 * The portal's activity counts (docs/portal.md, "Activity"): edge pushes per account, UTC day and
 * answer status, and records dead-lettered per account, day and reason. Kept as plain counters in
 * the rate limiter's store (`RateLimiter.addCounts`), which every instance already shares, for
 * RETENTION_DAYS. The statuses and reasons are fixed lists, so a day's counts are one read of
 * known keys, no query.
 */

const RETENTION_DAYS = 8
const DAY_MS = 86_400_000

/**
 * The answers a push can give (docs/errors.md); anything else counts as `other`. 200 is only the
 * portal's fallbacks (contract 4.6): the batch upserted at once while the queue was unavailable.
 */
const PUSH_STATUSES = [200, 202, 400, 401, 403, 404, 408, 413, 415, 429, 431, 503] as const
export type PushOutcome = (typeof PUSH_STATUSES)[number] | 'other'

/** Why records were dead-lettered (services/upsert-worker/src/handle-batch.ts). */
export const DEAD_LETTER_REASONS = {
  unreadable: 'A whole batch could not be read (format version, attributes or body), so none of its records could be stored; counted as one per batch.',
  too_large: "The record is larger than a contact document may be once stored (the store's size limit).",
  store_failed: 'Storing the record failed on three deliveries of its batch (the store refused the write each time).',
} as const
export type DeadLetterReason = keyof typeof DEAD_LETTER_REASONS

/** the UTC day last asked for and its bounds: every push is counted under its day (push-recorder.ts) */
let lastDay = { from: 0, to: 0, day: '' }

export function dayOf(ms: number): string {
  if (ms >= lastDay.from && ms < lastDay.to) return lastDay.day
  const from = Math.floor(ms / DAY_MS) * DAY_MS
  lastDay = { from, to: from + DAY_MS, day: new Date(from).toISOString().slice(0, 10) }
  return lastDay.day
}

export function pushOutcomeOf(status: number): PushOutcome {
  return (PUSH_STATUSES as readonly number[]).includes(status) ? (status as PushOutcome) : 'other'
}

export const pushCountKey = (accountId: string, day: string, outcome: PushOutcome) => `activity:push:${accountId}:${day}:${outcome}`
const deadLetterCountKey = (accountId: string, day: string, reason: DeadLetterReason) => `activity:dead:${accountId}:${day}:${reason}`

/** A counter of `day` lives until RETENTION_DAYS after that day began. */
export function expiryOf(day: string): number {
  return Date.parse(`${day}T00:00:00Z`) + RETENTION_DAYS * DAY_MS
}

/** The last `days` UTC days, newest first. */
function lastDays(nowMs: number, days = RETENTION_DAYS - 1): string[] {
  return Array.from({ length: days }, (_, i) => dayOf(nowMs - i * DAY_MS))
}

export interface PushDay {
  day: string
  counts: Record<string, number>
  total: number
}

/** Pushes per day by answer status, newest day first; statuses never seen in the period are left out. */
export async function readPushActivity(
  deps: Pick<PlatformDeps, 'rateLimiter' | 'clock'>,
  accountId: string,
  days?: number,
): Promise<{ days: PushDay[]; statuses: string[] }> {
  const nowMs = deps.clock.now()
  const dayList = lastDays(nowMs, days)
  const outcomes: PushOutcome[] = [...PUSH_STATUSES, 'other']
  const keys = dayList.flatMap((d) => outcomes.map((o) => pushCountKey(accountId, d, o)))
  const counts = await deps.rateLimiter.readCounts(keys, nowMs)
  const seen = new Set<string>()
  const result = dayList.map((day, i) => {
    const c: Record<string, number> = {}
    let total = 0
    outcomes.forEach((o, j) => {
      const n = counts[i * outcomes.length + j]!
      if (n > 0) {
        c[String(o)] = n
        total += n
        seen.add(String(o))
      }
    })
    return { day, counts: c, total }
  })
  return { days: result, statuses: outcomes.map(String).filter((o) => seen.has(o)) }
}

/** Records dead-lettered per day and reason, newest day first; only days with any. */
export async function readDeadLetterActivity(
  deps: Pick<PlatformDeps, 'rateLimiter' | 'clock'>,
  accountId: string,
): Promise<Array<{ day: string; reason: DeadLetterReason; records: number }>> {
  const nowMs = deps.clock.now()
  const reasons = Object.keys(DEAD_LETTER_REASONS) as DeadLetterReason[]
  const dayList = lastDays(nowMs)
  const counts = await deps.rateLimiter.readCounts(
    dayList.flatMap((d) => reasons.map((r) => deadLetterCountKey(accountId, d, r))),
    nowMs,
  )
  return dayList.flatMap((day, i) => reasons.map((reason, j) => ({ day, reason, records: counts[i * reasons.length + j]! }))).filter((r) => r.records > 0)
}

/**
 * Counts records dead-lettered now (the worker calls it beside the publish). Awaited by the
 * worker, which is off any client's path; a failure is logged, never fails the batch.
 */
export async function countDeadLetters(
  deps: Pick<PlatformDeps, 'rateLimiter' | 'clock' | 'logger'>,
  accountId: string | undefined,
  reason: DeadLetterReason,
  records: number,
): Promise<void> {
  if (!accountId || records <= 0) return
  const day = dayOf(deps.clock.now())
  try {
    await deps.rateLimiter.addCounts([{ key: deadLetterCountKey(accountId, day, reason), by: records }], expiryOf(day))
  } catch (err) {
    deps.logger.warn({ err }, 'dead-letter activity count not stored')
  }
}
