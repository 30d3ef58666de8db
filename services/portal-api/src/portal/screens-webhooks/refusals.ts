import { isAppError } from '@lsv/shared/errors/app-error.ts'
import { webhookActionLimitText, type WebhookAction } from '@lsv/shared/domain/webhooks/rate-limit.ts'

/** A refusal the tenant can fix (400 with issues, 409) in words; anything else is rethrown. */
export function refusal(err: unknown): string {
  if (!isAppError(err) || (err.status !== 400 && err.status !== 409)) throw err
  return err.issues?.length ? err.issues.map((i) => i.message).join('; ') : err.message
}

/**
 * A refusal for the account's limit on an action that sends traffic (429): its words for the
 * page, and its `Retry-After` for the answer; null for any other error.
 */
export function limitRefusal(err: unknown, action: WebhookAction): { text: string; retryAfter: string } | null {
  if (!isAppError(err) || err.status !== 429) return null
  const retryAfter = err.headers['retry-after'] ?? '60'
  return { text: webhookActionLimitText(action, retryAfter), retryAfter }
}
