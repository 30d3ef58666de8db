import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { createIntegration, listIntegrations } from '@lsv/shared/domain/tenants/integrations.ts'
import { consumeWebhookActionQuota } from '@lsv/shared/domain/webhooks/rate-limit.ts'
import { readEndpointHealth, type EndpointHealth } from '@lsv/shared/domain/webhooks/endpoint-health.ts'
import { sendPage } from '../kit/page.ts'
import { formOf } from '../kit/forms.ts'
import { redirectToReveal } from '../reveal.ts'
import { sessionOf } from '../session.ts'
import { integrationForm, requireUrlLength } from './endpoint-form.ts'
import { auditedIntegrationChange, hostOf } from './integration-audit.ts'
import { limitRefusal, refusal } from './refusals.ts'
import { FlashQuery } from './schemas.ts'
import { WEBHOOKS_PATH, webhookPath } from './paths.ts'
import { listBody, type FormState } from './views.ts'

/** the endpoint list reads health for this many endpoints at most (one read of its counters each) */
const HEALTH_ON_LIST = 50

/** The list of the account's webhooks, with the add form (as posted, when `form` says why it was refused). */
async function sendList(deps: PlatformDeps, request: FastifyRequest, reply: FastifyReply, status: number, form: FormState | null = null) {
  const { account } = sessionOf(request)
  const { data } = await listIntegrations(deps, account.id)
  // health at a glance: one read of its health counters per endpoint, for the first HEALTH_ON_LIST
  const health = new Map<string, EndpointHealth>(
    await Promise.all(data.slice(0, HEALTH_ON_LIST).map(async (i) => [i.id, await readEndpointHealth(deps, i.id)] as const)),
  )
  return sendPage(reply, {
    status,
    account,
    current: WEBHOOKS_PATH,
    error: form ? 'The webhook was not added.' : null,
    title: 'Webhooks',
    body: listBody({ account, integrations: data, form, health, loopbackAllowed: deps.config.allowLoopbackWebhooks }),
  })
}

/** `GET /portal/webhooks` (the list) and its add form's `POST`, which leads to the new secret's one-time page. */
export function registerEndpointList(scope: App, deps: PlatformDeps): void {
  scope.get(WEBHOOKS_PATH, { schema: { hide: true, querystring: FlashQuery } }, async (request, reply) => sendList(deps, request, reply, 200))

  scope.post(WEBHOOKS_PATH, { schema: { hide: true } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { state, body } = integrationForm(formOf(request.body))
    let created
    try {
      requireUrlLength(state.url)
      const withEntry = auditedIntegrationChange(deps, request, 'integration.created', (i) => ({
        host: hostOf(i.url),
        payload_version: i.payload_version,
        contact_handles: i.tiers.contact_handles,
        sensitive_traits: i.tiers.sensitive_traits,
      }))
      await consumeWebhookActionQuota(deps, 'integration_create', account.id)
      created = await createIntegration(withEntry, account.id, body)
    } catch (err) {
      const limited = limitRefusal(err, 'integration_create')
      if (limited) return sendList(deps, request, reply.header('retry-after', limited.retryAfter), 429, { ...state, error: limited.text })
      return sendList(deps, request, reply, 400, { ...state, error: refusal(err) })
    }
    // a redirect, so a reload adds no second webhook; the secret on the one-time page it leads to
    return redirectToReveal(deps, request, reply, {
      title: 'Webhook created',
      label: `Signing secret of ${created.url}`,
      secret: created.signing_secret,
      note: "it signs every delivery to this webhook. You can reveal it again on the webhook's page (recorded in the audit log).",
      back: { path: webhookPath(created.id), text: 'Go to the webhook' },
    })
  })
}
