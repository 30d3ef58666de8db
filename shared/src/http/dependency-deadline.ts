import { AppError } from '../errors/app-error.ts'

/**
 * How long the edge's push path waits for one dependency stage (tenant lookups through the
 * cache and store, the credential, the rate limiter; then the queue publish) before it answers
 * 503 `temporarily unavailable`, which the contract says is safe to retry (docs/architecture.md,
 * "Dependency deadlines"). Healthy calls take milliseconds; a stalled Firestore or Pub/Sub would
 * otherwise hold the request until the client library's own timeouts (15 s for a publish, 60 s
 * and more for Firestore) or the client gives up.
 */
export const DEPENDENCY_DEADLINE_MS = 5_000

/**
 * `work`, or a 503 `temporarily_unavailable` once `ms` have passed without it settling. The
 * abandoned call keeps running: a publish that completes after the 503 is a batch queued twice
 * once the client retries, which the worker's upsert absorbs (idempotent per account on
 * (source, external_id), docs/merge.md). A 202 is therefore only ever sent for a batch whose
 * publish settled.
 */
export async function withinDeadline<T>(work: Promise<T>, ms: number = DEPENDENCY_DEADLINE_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AppError('temporarily_unavailable', { cause: new Error(`no answer from a dependency within ${ms} ms`) })), ms)
  })
  // the loser of the race settles unobserved: its rejection must not become an unhandled one
  work.catch(() => {})
  try {
    return await Promise.race([work, expired])
  } finally {
    clearTimeout(timer)
  }
}
