import type { PlatformDeps } from '../../ports/deps.ts'
import type { RateLimitWindow } from '../../model/rate-limit-window.ts'
import { AppError } from '../../errors/app-error.ts'

/** Link minting, per customer (account): fixed window of 120 per minute (contract section 8). */
export const LINK_MINT_WINDOW: RateLimitWindow = { name: 'link-mint-minute', limit: 120, seconds: 60 }

function linkMintRateKey(accountId: string): string {
  return `links:${accountId}`
}

/**
 * Counts one mint request of the account; throws 429 `rate limited` once the window is spent.
 * `Retry-After` is 60: contract 7.3 fixes it at 60 for the 60-second window (waiting that long
 * always reaches the next window, whatever the phase of the fixed window).
 */
export async function consumeLinkMintQuota(deps: PlatformDeps, accountId: string): Promise<void> {
  const decision = await deps.rateLimiter.consume(linkMintRateKey(accountId), [LINK_MINT_WINDOW], deps.clock.now())
  if (!decision.allowed) {
    throw new AppError('rate_limited', { headers: { 'retry-after': String(Math.max(1, LINK_MINT_WINDOW.seconds)) } })
  }
}
