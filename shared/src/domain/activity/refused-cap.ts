import type { PlatformDeps } from '../../ports/deps.ts'
import { counterBuffer } from '../outcomes/counter-buffer.ts'

/**
 * How many refused pushes the inbound debugger records per connection and minute (issue 31):
 * anyone who knows a webhook source id can make refusals without a token, so beyond
 * REFUSED_RECORDED_PER_MINUTE a connection's refusals of the current UTC minute are counted, not
 * recorded. The count is what the page shows ("and 380 more refused since 12:03 UTC"). Kept per
 * instance, in memory: with N edge instances a connection records at most N × the cap a minute,
 * and refused entries have their own slice in the store anyway (ports/push-log.ts), so they never
 * push an accepted entry out; the cap bounds the store writes a flood costs.
 */
export const REFUSED_RECORDED_PER_MINUTE = 20
const MINUTE_MS = 60_000
/** a minute's count is kept a few minutes: the page reads the current and the previous one */
const KEPT_MS = 5 * MINUTE_MS
/** connections tracked per minute (an instance's memory bound); beyond, a refusal is neither recorded nor counted */
const MAX_CONNECTIONS = 1_000
const FLUSH_EVERY_MS = 2_000

const unrecordedKey = (connectionId: string, minuteStartMs: number) => `pushlog:unrecorded:${connectionId}:${minuteStartMs}`
const minuteOf = (ms: number) => ms - (ms % MINUTE_MS)

/**
 * The cap, for the push log's recorder. `admit` is a map update: true when this refusal may be
 * recorded, false when it is over the cap (then counted, written with the counters every
 * FLUSH_EVERY_MS; a failed write is logged and dropped).
 */
export function refusedCap(deps: Pick<PlatformDeps, 'counters' | 'logger'>) {
  const buffer = counterBuffer(deps, 'unrecorded refused pushes', FLUSH_EVERY_MS)
  let minute = -1
  const seen = new Map<string, number>()
  return {
    admit(connectionId: string, nowMs: number): boolean {
      const m = minuteOf(nowMs)
      if (m !== minute) {
        minute = m
        seen.clear()
      }
      const n = seen.get(connectionId) ?? 0
      if (n === 0 && seen.size >= MAX_CONNECTIONS) return false
      seen.set(connectionId, n + 1)
      if (n < REFUSED_RECORDED_PER_MINUTE) return true
      buffer.gather({ key: unrecordedKey(connectionId, m), add: 1 }, m + KEPT_MS)
      return false
    },
    flush: buffer.flush,
  }
}

/** Refused pushes of the connection counted but not recorded, in the previous and the current UTC minute. */
export async function readUnrecordedRefusals(deps: Pick<PlatformDeps, 'counters' | 'clock'>, connectionId: string): Promise<{ count: number; since: string }> {
  const nowMs = deps.clock.now()
  const since = minuteOf(nowMs) - MINUTE_MS
  const counts = await deps.counters.read([unrecordedKey(connectionId, since), unrecordedKey(connectionId, since + MINUTE_MS)], nowMs)
  return { count: counts.reduce((a, b) => a + b, 0), since: new Date(since).toISOString() }
}
