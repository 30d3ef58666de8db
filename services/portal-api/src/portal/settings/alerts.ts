import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { AccountRecord } from '@lsv/shared/model/records.ts'
import { isAppError } from '@lsv/shared/errors/app-error.ts'
import { alertsOf, setAlerts } from '@lsv/shared/domain/tenants/alerts.ts'
import { sendTestAlert, type AlertSent } from '@lsv/shared/domain/alerts/send.ts'
import { consumeWebhookActionQuota, webhookActionLimitText } from '@lsv/shared/domain/webhooks/rate-limit.ts'
import { html } from '../kit/html.ts'
import { fieldErrorsOf, fieldValue, formOf, type FieldErrors } from '../kit/forms.ts'
import { redirectTo } from '../kit/page.ts'
import { errorOf, formError, FormBody, help, textField } from '../kit/ui.ts'
import { when } from '../kit/time.ts'
import { auditOf } from '../kit/audited.ts'
import { sessionOf } from '../session.ts'
import { redirectToReveal } from '../reveal.ts'

const SETTINGS_PATH = '/portal/settings'
const ALERTS_PATH = `${SETTINGS_PATH}/alerts`
const TEST_PATH = `${ALERTS_PATH}/test`
/** the section's anchor: where a refusal or a test's answer brings the tenant back to */
const ANCHOR = 'alerts'

/** What the section shows besides the stored settings: a refused form as typed, or a test's refusal. */
export interface AlertsFormState {
  errors: FieldErrors | null
  values?: { email: string; url: string }
}

/** Re-renders the Settings screen with the section's state (settings/index.ts). */
type RenderSettings = (request: FastifyRequest, reply: FastifyReply, status: number, alerts: AlertsFormState) => Promise<FastifyReply>

/** The confirmations of the section's redirects (one per outcome of a test, so the words are exact). */
export const ALERT_FLASHES = {
  'alerts-saved': 'Alerts saved.',
  'alert-test-sent': 'Test alert sent. The alert webhook gets it within seconds (retried until it answers 200); the email is on its way.',
  'alert-test-partly': 'Test alert sent, but not everywhere: see the log of your mail relay or the alert webhook. Nothing was changed.',
  'alert-test-email-off': 'Test alert sent to the alert webhook. Emails are turned off on this platform, so no email was sent.',
} as const

/** The flash code of a test's outcome. */
function testFlash(sent: AlertSent): keyof typeof ALERT_FLASHES {
  if (sent.webhook === 'failed' || sent.email === 'failed') return 'alert-test-partly'
  if (sent.email === 'off') return 'alert-test-email-off'
  return 'alert-test-sent'
}

/**
 * The "Alerts" section of Settings (docs/portal.md, "Alerts"): an email address and a second
 * webhook URL that hear when an endpoint starts failing, is disabled or works again
 * (domain/alerts/). The URL follows the rules of a webhook endpoint; its own signing secret is
 * shown once when it is set.
 */
export function alertsSection(account: AccountRecord, emailEnabled: boolean, s: AlertsFormState | undefined) {
  const saved = alertsOf(account)
  const v = s?.values ?? { email: saved.email ?? '', url: saved.webhook?.url ?? '' }
  const errors = s?.errors ?? null
  const fieldOnly = errors && (errors['/email'] || errors['/url'])
  return html`<section aria-labelledby="alerts-h" id="${ANCHOR}">
<h2 id="alerts-h">Alerts</h2>
${help(
  'Hear about a webhook endpoint that starts failing, is disabled or works again, outside the portal.',
  html`One message per change, not per delivery: when an endpoint's newest deliveries keep failing (half of the failure threshold), when it answers 410 and is disabled, and when it answers 200 again. The alert webhook gets a signed JSON POST (docs: "Endpoint alerts"), signed with a secret of its own.`,
)}
${emailEnabled ? '' : html`<p class="notice" id="alert-email-off">Alert emails are turned off on this platform: an address is kept, but only the alert webhook is sent.</p>`}
<form method="post" action="${ALERTS_PATH}">
${fieldOnly ? '' : formError(errors, { conflict: 'Set an email address or an alert webhook URL first, then send a test alert.' })}
${textField({ id: 'alert-email', label: 'Email address', name: 'email', type: 'email', value: v.email, hint: 'one address; leave it empty for no email', error: errorOf(errors, '/email') })}
${textField({ id: 'alert-url', label: 'Alert webhook URL', name: 'url', type: 'url', value: v.url, hint: 'the same rules as a webhook endpoint; leave it empty for none', error: errorOf(errors, '/url') })}
${saved.webhook ? html`<p class="hint" id="alert-secret-set">Its signing secret was shown once, ${when(saved.webhook.created_at)}. To get a new one, save with the URL empty, then set it again.</p>` : ''}
<p><button type="submit">Save alerts</button></p>
</form>
<form method="post" action="${TEST_PATH}"><button type="submit" class="secondary" id="alert-test">Send a test alert</button></form>
</section>`
}

/** Where the alert webhook's secret is shown once, then back to the section. */
const revealView = (url: string, secret: string) => ({
  title: 'Alert webhook set',
  label: `Signing secret of the alert webhook ${url}`,
  secret,
  note: 'it signs every alert POSTed to this URL (Standard Webhooks headers). It is shown once, now.',
  back: { path: `${SETTINGS_PATH}#${ANCHOR}`, text: 'Back to Settings' },
})

/**
 * The section's routes: saving (audited with the change; a new URL leads to its secret, shown
 * once) and the test alert (audited; a 409 page when nothing is set, a 429 page past 5 a minute,
 * docs/webhooks.md "Limits on actions that send traffic"). Every answer to a valid form is a 303.
 */
export function registerAlertRoutes(scope: App, deps: PlatformDeps, render: RenderSettings): void {
  scope.post(ALERTS_PATH, { schema: { hide: true, body: FormBody } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const values = { email: fieldValue(formOf(request.body), 'email'), url: fieldValue(formOf(request.body), 'url') }
    let result: Awaited<ReturnType<typeof setAlerts>>
    try {
      const withEntry = auditOf(deps, request).change((a: AccountRecord) => {
        const written = alertsOf(a)
        // the host only: a URL's path or query may hold the receiver's token
        return {
          action: 'alerts.set',
          target: { account_id: account.id },
          details: { email: written.email ?? '', webhook_host: written.webhook ? new URL(written.webhook.url).host : '' },
        }
      })
      result = await setAlerts(withEntry, account.id, values)
    } catch (err) {
      return render(request, reply, 400, { errors: fieldErrorsOf(err), values })
    }
    if (result.newSecret && result.alerts.webhook) return redirectToReveal(deps, request, reply, revealView(result.alerts.webhook.url, result.newSecret))
    return redirectTo(reply, SETTINGS_PATH, 'alerts-saved')
  })

  scope.post(TEST_PATH, { schema: { hide: true } }, async (request, reply) => {
    const { account } = sessionOf(request)
    let sent: AlertSent
    try {
      // a POST to a URL the tenant chose and an email, on demand: bounded like a test event
      await consumeWebhookActionQuota(deps, 'test_alert', account.id)
      sent = await sendTestAlert(deps, account.id)
    } catch (err) {
      if (isAppError(err) && err.status === 429) {
        const retryAfter = err.headers['retry-after'] ?? '60'
        return render(request, reply.header('retry-after', retryAfter), 429, { errors: { '': webhookActionLimitText('test_alert', retryAfter) } })
      }
      if (isAppError(err) && err.status === 409) return render(request, reply, 409, { errors: fieldErrorsOf(err) })
      throw err
    }
    await auditOf(deps, request).record({
      action: 'alerts.test_sent',
      target: { account_id: account.id },
      details: { webhook: sent.webhook ?? 'none', email: sent.email ?? 'none' },
    })
    return redirectTo(reply, SETTINGS_PATH, testFlash(sent))
  })
}
