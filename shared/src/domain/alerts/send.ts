import { randomBytes } from 'node:crypto'
import type { PlatformDeps } from '../../ports/deps.ts'
import type { AlertSettings } from '../../model/records.ts'
import type { EndpointAlert } from '../../contract/endpoint-alert.ts'
import { AppError } from '../../errors/app-error.ts'
import { createDelivery, type EnqueueDeps } from '../webhooks/deliveries.ts'
import { alertsOf } from '../tenants/alerts.ts'
import { alertOf } from './alert.ts'
import { alertTargetId } from './target.ts'
import { alertMessage } from './mail-text.ts'

export type AlertDeps = EnqueueDeps & Pick<PlatformDeps, 'deliveries' | 'tenants' | 'claims' | 'alertMail' | 'config' | 'logger'>

/**
 * How long an alert's email is remembered as sent: the same change told twice (two attempts of
 * one endpoint seeing the new streak at once, two instances) is one email. The webhook needs no
 * claim: the alert's id makes its delivery id, so a second one is the same delivery.
 */
const EMAIL_CLAIM_SECONDS = 7 * 24 * 3600

/** What became of one alert on each channel: null where the account has none. */
export interface AlertSent {
  webhook: 'queued' | 'failed' | null
  email: 'sent' | 'off' | 'failed' | null
}

/**
 * Sends one alert where the account asked for it. Never throws: a channel that fails is logged
 * (with the alert's id) and reported in the result.
 *
 * The alert webhook goes through the delivery machinery (a delivery to the account's reserved
 * alert target, target.ts): a store write and an enqueue, like an operational event, after which
 * the task scheduler, the retry schedule, the sweep and the SSRF checks are the ones every
 * webhook has, and a receiver that is down delays nothing here. The email is sent here, once per
 * alert (an idempotency claim): a file written locally, a hand-over to the SMTP relay in Google
 * Cloud (bounded by the adapter's timeouts); a relay that refuses it is logged, not retried.
 */
export async function sendAlert(deps: AlertDeps, settings: AlertSettings, alert: EndpointAlert): Promise<AlertSent> {
  const sent: AlertSent = { webhook: null, email: null }
  const log = { event: 'endpoint_alert', alertId: alert.id, type: alert.type, accountId: alert.account_id, endpointId: alert.endpoint.id }
  if (settings.webhook) {
    try {
      await createDelivery(deps, {
        accountId: alert.account_id,
        integrationId: alertTargetId(alert.account_id),
        eventId: alert.id,
        body: JSON.stringify(alert),
        now: new Date(deps.clock.now()).toISOString(),
      })
      sent.webhook = 'queued'
    } catch (err) {
      deps.logger.error({ ...log, err }, 'endpoint alert: the alert webhook delivery could not be created')
      sent.webhook = 'failed'
    }
  }
  if (settings.email) {
    if (!deps.alertMail.enabled) sent.email = 'off'
    else {
      try {
        // claimed before it is sent: a relay that fails after the claim loses this email (logged), never doubles it
        if (await deps.claims.claimOnce(`endpoint-alert-email\u0000${alert.id}\u0000${settings.email}`, EMAIL_CLAIM_SECONDS, deps.clock.now()))
          await deps.alertMail.send(alertMessage(alert, settings.email))
        sent.email = 'sent'
      } catch (err) {
        deps.logger.error({ ...log, err }, 'endpoint alert: the email could not be sent')
        sent.email = 'failed'
      }
    }
  }
  deps.logger.info({ ...log, sent }, 'endpoint alert sent')
  return sent
}

/**
 * The Settings screen's "Send a test alert": an `endpoint.failing` alert about a made-up endpoint,
 * marked `test: true`, with an id of its own each time (a second test is a second delivery), to
 * every channel the account set. Conflict when it set none.
 */
export async function sendTestAlert(deps: AlertDeps, accountId: string): Promise<AlertSent> {
  const account = await deps.tenants.getAccount(accountId)
  if (!account) throw new AppError('not_found')
  const settings = alertsOf(account)
  if (!settings.email && !settings.webhook) throw new AppError('conflict')
  const now = deps.clock.now()
  const at = new Date(now).toISOString()
  const example = {
    id: 'int_example',
    account_id: accountId,
    url: 'https://example.com/webhooks',
    name: 'Example endpoint',
  }
  const alert = alertOf(deps.config, {
    state: 'failing',
    endpoint: {
      ...example,
      payload_version: 2,
      tiers: { contact_handles: false, sensitive_traits: false },
      active: true,
      disabled_reason: null,
      signing_secrets: [],
      created_at: at,
      updated_at: at,
    },
    at,
    since: new Date(now - 60 * 60 * 1000).toISOString(),
    consecutiveFailures: 10,
    threshold: 20,
    lastError: 'HTTP 500',
  })
  const test: EndpointAlert = {
    ...alert,
    id: `alrt_test_${randomBytes(12).toString('base64url')}`,
    test: true,
    portal_url: `${deps.config.portalBaseUrl}/portal/webhooks`,
  }
  return sendAlert(deps, settings, test)
}
