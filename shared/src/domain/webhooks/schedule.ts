/**
 * Retry schedule of one delivery: the delay before each attempt, measured from the previous
 * failed attempt. Attempt 1 is immediate; after attempt 8 fails the delivery is `failed` and
 * kept for replay. Delays are jittered (±20%) so endpoints that fail together do not retry
 * together; a `Retry-After` answer can only push the next attempt later, never earlier, and
 * is capped at the longest step.
 */
export const RETRY_ANCHORS_MS: readonly number[] = [0, 5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000]

export const MAX_ATTEMPTS = RETRY_ANCHORS_MS.length
export const JITTER = 0.2
const MAX_DELAY_MS = 10 * 3_600_000

/**
 * Delay before attempt `nextAttempt` (2..MAX_ATTEMPTS), or null when no attempt is left.
 * `random` in [0,1) picks the jitter; `retryAfterMs` comes from the previous answer.
 */
export function retryDelayMs(nextAttempt: number, random: number, retryAfterMs: number | null = null): number | null {
  if (nextAttempt < 2 || nextAttempt > MAX_ATTEMPTS) return null
  const anchor = RETRY_ANCHORS_MS[nextAttempt - 1]!
  const jittered = Math.round(anchor * (1 - JITTER + 2 * JITTER * random))
  if (retryAfterMs !== null && retryAfterMs > jittered) return Math.min(retryAfterMs, MAX_DELAY_MS)
  return jittered
}

/** `Retry-After` as delta-seconds or an HTTP date; null when absent or unparseable. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | null {
  const v = Array.isArray(value) ? value[0] : value
  if (!v) return null
  const trimmed = v.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  const date = Date.parse(trimmed)
  if (Number.isNaN(date)) return null
  return Math.max(0, date - nowMs)
}

/** why an endpoint that answered 410 Gone was disabled (its integration's `disabled_reason`) */
export const GONE_REASON = 'endpoint answered 410'
