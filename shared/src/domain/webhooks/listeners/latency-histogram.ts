import type { PlatformDeps } from '../../../ports/deps.ts'
import type { DeliveryAttempted, DeliveryListener } from '../../../ports/listeners.ts'
import { counterBuffer } from '../../outcomes/counter-buffer.ts'

/**
 * How fast each endpoint answers: a histogram of its attempts' latency per clock hour (UTC), in
 * the counters port, for the attempts that reached the network: those answered (a near receiver
 * can answer within the millisecond: latency 0), and those that failed after a measurable time.
 * No answer in no time is an attempt that sent nothing (no secret, a refused address).
 * Upper bounds in ms; the last bucket holds the rest (the sender gives up at 15 s).
 */
export const LATENCY_BOUNDS_MS = [100, 250, 500, 1_000, 2_500, 5_000, 10_000] as const
const HOUR_MS = 3_600_000
/** an hour's buckets are kept two days */
const KEPT_MS = 48 * HOUR_MS

const bucketKey = (integrationId: string, hourStartMs: number, bucket: number) => `latency:${integrationId}:${hourStartMs}:${bucket}`
const bucketOf = (latencyMs: number) => {
  const i = LATENCY_BOUNDS_MS.findIndex((bound) => latencyMs <= bound)
  return i === -1 ? LATENCY_BOUNDS_MS.length : i
}

/**
 * The delivery latency histogram listener. Failure contract: never throws; a failed write is
 * logged and dropped (a view: each attempt's latency stays in the delivery log); at most a second
 * late; flushed with the listeners at an app's close.
 */
export function latencyHistogramListener(deps: Pick<PlatformDeps, 'counters' | 'logger'>): DeliveryListener & { flush(): Promise<void> } {
  const buffer = counterBuffer(deps, 'delivery latency histogram', 1_000)
  return {
    name: 'delivery latency histogram',
    onDeliveryAttempted(o: DeliveryAttempted) {
      if (o.attempt.status_code === null && o.attempt.latency_ms <= 0) return
      const atMs = Date.parse(o.attempt.at)
      const hour = atMs - (atMs % HOUR_MS)
      buffer.gather({ key: bucketKey(o.delivery.integration_id, hour, bucketOf(o.attempt.latency_ms)), add: 1 }, hour + KEPT_MS)
    },
    flush: buffer.flush,
  }
}

/** The endpoint's histogram over the last `hours` clock hours: attempts per bucket, in LATENCY_BOUNDS_MS order, then the rest. */
export async function readLatencyHistogram(deps: Pick<PlatformDeps, 'counters' | 'clock'>, integrationId: string, hours = 24): Promise<number[]> {
  const nowMs = deps.clock.now()
  const current = nowMs - (nowMs % HOUR_MS)
  const buckets = LATENCY_BOUNDS_MS.length + 1
  const keys = Array.from({ length: hours }, (_, h) => Array.from({ length: buckets }, (_, b) => bucketKey(integrationId, current - h * HOUR_MS, b))).flat()
  const values = await deps.counters.read(keys, nowMs)
  return Array.from({ length: buckets }, (_, b) => values.reduce((n, v, i) => (i % buckets === b ? n + v : n), 0))
}
