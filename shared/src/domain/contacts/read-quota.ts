import type { PlatformDeps } from '../../ports/deps.ts'
import type { RateLimitWindow } from '../../model/rate-limit-window.ts'
import { AppError } from '../../errors/app-error.ts'

/**
 * Request rate of the read contract (`GET /api/v1/contacts`, `GET /api/v1/contacts/{id}`), per
 * API key, both operations together: 120 per 60 s and 50,000 per 24 h, fixed windows in the
 * shared rate-limiter store (the push operations' limits, contract section 8, applied to reads;
 * docs/read-api.md). Counted only once the key is authenticated (section 7.4); a refused request
 * counts in no window.
 */
export const READ_WINDOWS: readonly RateLimitWindow[] = [
  { name: 'read-60s', limit: 120, seconds: 60 },
  { name: 'read-24h', limit: 50_000, seconds: 86_400 },
]

function readQuotaKey(keyId: string): string {
  return `read:key:${keyId}`
}

/**
 * Counts one read; throws 429 `rate limited` with `Retry-After` when a window is spent: 60 for
 * the 60-second window, the seconds left (at least 1) for the 24-hour one (contract 7.3).
 */
export async function consumeReadQuota(deps: Pick<PlatformDeps, 'rateLimiter' | 'clock'>, keyId: string): Promise<void> {
  const decision = await deps.rateLimiter.consume(readQuotaKey(keyId), READ_WINDOWS, deps.clock.now())
  if (decision.allowed) return
  const retryAfter = decision.window.seconds === 60 ? 60 : Math.max(1, decision.resetInSeconds)
  throw new AppError('rate_limited', { headers: { 'retry-after': String(retryAfter) } })
}
