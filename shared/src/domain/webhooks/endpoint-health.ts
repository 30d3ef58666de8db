import type { PlatformDeps } from '../../ports/deps.ts'
import type { CounterChange } from '../../ports/counters.ts'

/**
 * An endpoint's health as the portal shows it (docs/webhooks.md, "Health"): its attempts per
 * clock hour (UTC) of the last 24, answered 200 or not, and the instants of its latest success
 * and failure. Kept as counters by the health listener (listeners/health-counters.ts) as each
 * attempt is recorded, so a page reads 50 counters per endpoint whatever its traffic, instead of
 * recomputing them from the delivery log.
 */
const HEALTH_HOURS = 24
const HOUR_MS = 3_600_000
/** an hour's counts are kept a day past the window */
const HOUR_KEPT_MS = (HEALTH_HOURS + 24) * HOUR_MS
/** the latest instants are kept this long after the endpoint's last attempt */
const LAST_KEPT_MS = 400 * 24 * HOUR_MS

const hourKey = (integrationId: string, hourStartMs: number, ok: boolean) => `health:${integrationId}:${hourStartMs}:${ok ? 'ok' : 'failed'}`
const lastKey = (integrationId: string, ok: boolean) => `health:${integrationId}:last-${ok ? 'success' : 'failure'}`
const hourOf = (ms: number) => ms - (ms % HOUR_MS)

/** The counter changes one attempt makes, with their expiry: its hour's count and its kind's latest instant. */
export function healthChanges(integrationId: string, atMs: number, ok: boolean): { changes: CounterChange[]; expireAtMs: number }[] {
  const hour = hourOf(atMs)
  return [
    { changes: [{ key: hourKey(integrationId, hour, ok), add: 1 }], expireAtMs: hour + HOUR_KEPT_MS },
    { changes: [{ key: lastKey(integrationId, ok), max: atMs }], expireAtMs: atMs + LAST_KEPT_MS },
  ]
}

export interface EndpointHealth {
  /** attempts in the last 24 clock hours, answered 200 / not */
  succeeded: number
  failed: number
  lastSuccess: string | null
  lastFailure: string | null
  /** 24 hourly buckets, oldest first (the last one is the current hour): attempts answered 200 and not */
  hourly: { ok: number; failed: number }[]
}

/** One read of the endpoint's 50 health counters. */
export async function readEndpointHealth(deps: Pick<PlatformDeps, 'counters' | 'clock'>, integrationId: string): Promise<EndpointHealth> {
  const nowMs = deps.clock.now()
  const hours = Array.from({ length: HEALTH_HOURS }, (_, i) => hourOf(nowMs) - (HEALTH_HOURS - 1 - i) * HOUR_MS)
  const keys = [
    ...hours.flatMap((h) => [hourKey(integrationId, h, true), hourKey(integrationId, h, false)]),
    lastKey(integrationId, true),
    lastKey(integrationId, false),
  ]
  const values = await deps.counters.read(keys, nowMs)
  const hourly = hours.map((_, i) => ({ ok: values[2 * i]!, failed: values[2 * i + 1]! }))
  const instant = (ms: number) => (ms > 0 ? new Date(ms).toISOString() : null)
  return {
    succeeded: hourly.reduce((n, b) => n + b.ok, 0),
    failed: hourly.reduce((n, b) => n + b.failed, 0),
    lastSuccess: instant(values[2 * HEALTH_HOURS]!),
    lastFailure: instant(values[2 * HEALTH_HOURS + 1]!),
    hourly,
  }
}
