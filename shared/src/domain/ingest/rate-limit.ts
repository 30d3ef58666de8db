import type { PlatformDeps } from '../../ports/deps.ts'
import type { RateLimitWindow } from '../../model/rate-limit-window.ts'
import { AppError } from '../../errors/app-error.ts'

/**
 * Request rate of the push operations (contract section 8): 120 per 60 s and 50,000 per 24 h,
 * fixed windows in the shared rate limiter store (every instance counts in the same documents).
 * Only requests that passed routing and authentication get here, so failures never count
 * (section 7.4). A refused request counts in no window.
 */
export const PUSH_WINDOWS: readonly RateLimitWindow[] = [
  { name: 'push-60s', limit: 120, seconds: 60 },
  { name: 'push-24h', limit: 50_000, seconds: 86_400 },
]

/**
 * What one counter is kept for: the API key (4.3), the source (4.4) or the location (4.5).
 * A location's token-less calls (accepted before its cutover) count in windows of their own:
 * anyone can send them, so they must never use up the window of the sender holding the token.
 */
export type PushQuotaSubject =
  | { kind: 'key'; keyId: string }
  | { kind: 'source'; connectionId: string }
  | { kind: 'location'; accountId: string; locationId: string }
  | { kind: 'location-tokenless'; accountId: string; locationId: string }

export function pushQuotaKey(subject: PushQuotaSubject): string {
  switch (subject.kind) {
    case 'key':
      return `push:key:${subject.keyId}`
    case 'source':
      return `push:source:${subject.connectionId}`
    case 'location':
      return `push:location:${subject.accountId}:${subject.locationId}`
    case 'location-tokenless':
      return `push:location-tokenless:${subject.accountId}:${subject.locationId}`
  }
}

/**
 * Counts one request; throws 429 `rate limited` with `Retry-After` when a window is exhausted:
 * 60 for the 60-second window (section 7.3), the seconds left (at least 1) for the 24-hour one.
 */
export async function consumePushQuota(deps: Pick<PlatformDeps, 'rateLimiter' | 'clock'>, subject: PushQuotaSubject): Promise<void> {
  const decision = await deps.rateLimiter.consume(pushQuotaKey(subject), PUSH_WINDOWS, deps.clock.now())
  if (decision.allowed) return
  const retryAfter = decision.window.seconds === 60 ? 60 : Math.max(1, decision.resetInSeconds)
  throw new AppError('rate_limited', { headers: { 'retry-after': String(retryAfter) } })
}
