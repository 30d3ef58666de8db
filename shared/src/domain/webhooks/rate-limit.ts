import type { PlatformDeps } from '../../ports/deps.ts'
import type { RateLimitWindow } from '../../model/rate-limit-window.ts'
import { AppError } from '../../errors/app-error.ts'

/**
 * Actions that make the platform send signed POSTs to a URL the tenant chose (issue 21, item 5):
 * without a limit one portal session drove 214 a second at a URL of its choosing. Each account
 * gets its own fixed windows in the shared rate limiter store (every instance counts in the same
 * documents), sized so that normal work never meets them (docs/webhooks.md, "Limits on actions
 * that send traffic"). Together they bound what one account can make the platform send on
 * demand to about 75 first attempts (and 5 test alert emails) a minute.
 */
export const WEBHOOK_ACTION_WINDOWS = {
  /** a test event is a check of the receiver, done by a person: a few a minute at most */
  test_event: { name: 'webhook-test-event-minute', limit: 10, seconds: 60 },
  /** a replay resends one kept delivery; an operator's script after an outage may do many */
  replay: { name: 'webhook-replay-minute', limit: 60, seconds: 60 },
  /** each new integration is a new destination for every event of the account */
  integration_create: { name: 'webhook-integration-create-hour', limit: 20, seconds: 3600 },
  /** Settings' "Send a test alert": a POST to the alert webhook and an email, checked by a person */
  test_alert: { name: 'alert-test-minute', limit: 5, seconds: 60 },
} as const satisfies Record<string, RateLimitWindow>

export type WebhookAction = keyof typeof WEBHOOK_ACTION_WINDOWS

function webhookActionRateKey(action: WebhookAction, accountId: string): string {
  return `webhooks:${action}:${accountId}`
}

/**
 * Counts one request of `action` for the account; throws 429 `rate limited` once the window is
 * spent, with `Retry-After` as every other 429 of the platform has it (contract 7.3): 60 for a
 * 60-second window (waiting that long always reaches the next window), otherwise the seconds
 * until the window resets (at least 1). A refused request counts in no window. Callers count
 * after authentication and before the action, so a request the action then refuses (404, 409, a
 * destination refused) counts too: what the limit bounds is requests.
 */
export async function consumeWebhookActionQuota(deps: Pick<PlatformDeps, 'rateLimiter' | 'clock'>, action: WebhookAction, accountId: string): Promise<void> {
  const decision = await deps.rateLimiter.consume(webhookActionRateKey(action, accountId), [WEBHOOK_ACTION_WINDOWS[action]], deps.clock.now())
  if (decision.allowed) return
  const retryAfter = decision.window.seconds === 60 ? 60 : Math.max(1, decision.resetInSeconds)
  throw new AppError('rate_limited', { headers: { 'retry-after': String(retryAfter) } })
}

/** The words the portal shows for a refused action (the page also carries `Retry-After`). */
export function webhookActionLimitText(action: WebhookAction, retryAfterSeconds: string): string {
  const { limit, seconds } = WEBHOOK_ACTION_WINDOWS[action]
  const per = seconds === 60 ? 'a minute' : 'an hour'
  const what = { test_event: 'test events', replay: 'replays', integration_create: 'new webhooks', test_alert: 'test alerts' }[action]
  return `Too many ${what} for this account: at most ${limit} ${per}. Try again in ${retryAfterSeconds} seconds.`
}

/**
 * The window that holds one endpoint to `rate` deliveries a second on a shared (pool) queue,
 * where the queue's own rate is the pool's (pool-admission.ts): 1 s windows of the whole part of
 * the rate, or for a rate under 1 one delivery per ceil(1/rate) seconds. Rounded down, never up:
 * the endpoint gets at most its rate, as a queue of its own would give it (Cloud Tasks' bucket
 * also lets a full second's worth through at once).
 */
export function endpointRateWindow(rate: number): RateLimitWindow {
  if (rate >= 1) return { name: 'endpoint-rate', limit: Math.floor(rate), seconds: 1 }
  return { name: 'endpoint-rate', limit: 1, seconds: Math.ceil(1 / rate) }
}

export function endpointRateKey(integrationId: string): string {
  return `webhooks:endpoint-rate:${integrationId}`
}
