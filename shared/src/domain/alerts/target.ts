import type { PlatformDeps } from '../../ports/deps.ts'
import type { IntegrationRecord } from '../../model/records.ts'
import { alertsOf } from '../tenants/alerts.ts'

/**
 * An account's alert webhook as the delivery machinery sees it: alerts are deliveries
 * (domain/webhooks/deliveries.ts) to the reserved integration id `alerts-<account id>`, so they get
 * the signed POST, the retry schedule, the sweep and the SSRF checks of every webhook, with no
 * second sender. No integration can have such an id (tenant ids are `int_…`), and no delivery
 * list of the portal shows it (they list by integration).
 */
const ALERT_TARGET_PREFIX = 'alerts-'

export const alertTargetId = (accountId: string): string => `${ALERT_TARGET_PREFIX}${accountId}`

/** the account whose alert webhook the id names; null for any other delivery target */
export function accountOfAlertTarget(integrationId: string): string | null {
  return integrationId.startsWith(ALERT_TARGET_PREFIX) ? integrationId.slice(ALERT_TARGET_PREFIX.length) : null
}

/**
 * The account's alert webhook as an integration record (never stored), read fresh from the
 * tenant store (an alert is rare, and a URL just changed must not be signed with the old
 * secret); null when the account has none: a delivery to it then ends as failed, like one to a
 * deleted integration.
 */
export async function alertTarget(deps: Pick<PlatformDeps, 'tenants'>, accountId: string): Promise<IntegrationRecord | null> {
  const account = await deps.tenants.getAccount(accountId)
  const webhook = account ? alertsOf(account).webhook : null
  if (!webhook) return null
  return {
    id: alertTargetId(accountId),
    account_id: accountId,
    url: webhook.url,
    payload_version: 2,
    tiers: { contact_handles: false, sensitive_traits: false },
    active: true,
    disabled_reason: null,
    signing_secrets: [{ secret: webhook.signing_secret, created_at: webhook.created_at, expires_at: null }],
    created_at: webhook.created_at,
    updated_at: webhook.created_at,
  }
}
