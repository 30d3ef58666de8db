import { Type } from 'typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { AppError, isAppError } from '@lsv/shared/errors/app-error.ts'
import type { CreateIntegrationBody, UpdateIntegrationBody } from '@lsv/shared/contract/admin.ts'
import { createIntegration, getIntegration, listIntegrations, updateIntegration } from '@lsv/shared/domain/tenants/integrations.ts'
import { listDeliveryLog, replayDeliveryFor } from '@lsv/shared/domain/webhooks/delivery-log.ts'
import { currentSigningSecret, DEFAULT_SECRET_GRACE_SECONDS, rotateSigningSecret } from '@lsv/shared/domain/webhooks/secret-rotation.ts'
import { sendTestEvent } from '@lsv/shared/domain/webhooks/test-event.ts'
import { consumeWebhookActionQuota, webhookActionLimitText, type WebhookAction } from '@lsv/shared/domain/webhooks/rate-limit.ts'
import type { IntegrationRecord } from '@lsv/shared/model/records.ts'
import { flashOf, html, redirectTo, sendPage } from '../kit/page.ts'
import { redirectToReveal } from '../reveal.ts'
import { sessionOf } from '../session.ts'
import { formOf, fieldValue, type FormFields } from '../kit/forms.ts'
import {
  DELIVERY_KINDS,
  DELIVERY_STATUSES,
  detailBody,
  listBody,
  WEBHOOKS_PATH,
  webhookPath,
  type LogFilter,
  type FormState,
  type ShownSecret,
} from './views.ts'
import { CodeInput, codeFilterOf, instantOf, TimeInput } from './delivery-filters.ts'
import { registerDeliveryDebugger } from './delivery-debugger.ts'
import { registerRecoverScreens } from './recover.ts'
import { registerEndpointDelete } from './endpoint-delete.ts'
import { readEndpointHealth, type EndpointHealth } from '@lsv/shared/domain/webhooks/endpoint-health.ts'
import { describedForm, endpointTitle } from './endpoint-fields.ts'
import { isConfirmed, sendConfirmation } from './confirm.ts'
import { BAD_PAGE_LINK, PageLinkValue, pageNumberOf } from '../kit/pager.ts'
import type { ScreenDeclaration } from '../kit/screens.ts'
import { auditOf } from '../kit/audited.ts'

const PAGE = 20
/** the endpoint list reads health for this many endpoints at most (one read of its counters each) */
const HEALTH_ON_LIST = 50
const GRACE_CHOICES = new Set([0, 3600, 86_400, 604_800])

const IntegrationParams = Type.Object({ integrationId: Type.String({ minLength: 1, maxLength: 128 }) })
const DeliveryParams = Type.Object({ integrationId: Type.String({ minLength: 1, maxLength: 128 }), deliveryId: Type.String({ minLength: 1, maxLength: 128 }) })
const ListQuery = Type.Object({ flash: Type.Optional(Type.String({ maxLength: 64 })) })
const DetailQuery = Type.Object({
  flash: Type.Optional(Type.String({ maxLength: 64 })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
  page: PageLinkValue,
  // '' is "any" from the filter form
  status: Type.Optional(Type.Union([Type.Literal(''), ...DELIVERY_STATUSES.map((s) => Type.Literal(s))])),
  kind: Type.Optional(Type.Union([Type.Literal(''), ...DELIVERY_KINDS.map((k) => Type.Literal(k))])),
  event_id: Type.Optional(Type.String({ maxLength: 256 })),
  code: Type.Optional(CodeInput),
  from: Type.Optional(TimeInput),
  to: Type.Optional(TimeInput),
})
const NO_FILTER: LogFilter = { status: undefined, kind: undefined, eventId: undefined, cursor: undefined }

/** The form's fields as the management API's body (the same domain function validates them). */
function integrationForm(fields: FormFields | undefined): {
  state: Omit<FormState, 'error'>
  body: CreateIntegrationBody
  /** name and description for an update: null clears them */
  described: { name: string | null; description: string | null }
} {
  const url = fieldValue(fields, 'url').trim()
  const payloadVersion = fieldValue(fields, 'payload_version') === '1' ? '1' : '2'
  const contactHandles = fieldValue(fields, 'contact_handles') === 'on'
  const sensitiveTraits = fieldValue(fields, 'sensitive_traits') === 'on'
  const described = describedForm(fields)
  return {
    state: { url, payloadVersion, contactHandles, sensitiveTraits, name: described.name, description: described.description },
    body: {
      url,
      payload_version: payloadVersion === '1' ? 1 : 2,
      tiers: { contact_handles: contactHandles, sensitive_traits: sensitiveTraits },
      ...(described.body.name ? { name: described.body.name } : {}),
      ...(described.body.description ? { description: described.body.description } : {}),
    },
    described: described.body,
  }
}

/**
 * The endpoint's host (and port) for the audit log: what the entry is about without the rest of
 * the URL, whose path or query may carry a receiver's own token.
 */
const hostOf = (url: string): string => new URL(url).host

/** A refusal the tenant can fix (400 with issues, 409) in words; anything else is rethrown. */
function refusal(err: unknown): string {
  if (!isAppError(err) || (err.status !== 400 && err.status !== 409)) throw err
  return err.issues?.length ? err.issues.map((i) => i.message).join('; ') : err.message
}

/**
 * A refusal for the account's limit on an action that sends traffic (429): its words for the
 * page, and its `Retry-After` for the answer; null for any other error.
 */
function limitRefusal(err: unknown, action: WebhookAction): { text: string; retryAfter: string } | null {
  if (!isAppError(err) || err.status !== 429) return null
  const retryAfter = err.headers['retry-after'] ?? '60'
  return { text: webhookActionLimitText(action, retryAfter), retryAfter }
}

/** The grace of the previous signing secret, in words (the reveal page's note). */
const previousNote = (until: string | null): string =>
  until
    ? `The previous secret also signs every delivery until ${until}: both signatures are in webhook-signature, so your receiver keeps verifying while you change its secret.`
    : 'No previous secret signs deliveries any more.'

/**
 * Webhooks (docs/portal.md, "Webhooks"): the account's integrations, created and changed through
 * the management API's domain functions; the signing secret revealed or rotated with a grace; the
 * delivery log with filters (status, test or real events, one event id) and paging; replay; a
 * test event. Every change is in the audit log (never the secret).
 */
function registerWebhookScreens(scope: App, deps: PlatformDeps): void {
  registerDeliveryDebugger(scope, deps)
  registerRecoverScreens(scope, deps)
  registerEndpointDelete(scope, deps)
  /** the audit entry of a change to one integration, committed with the write (kit/audited.ts) */
  const audited = (request: FastifyRequest, action: string, details: (written: IntegrationRecord) => Record<string, string | number | boolean> = () => ({})) =>
    auditOf(deps, request).change((written: IntegrationRecord) => ({ action, target: { integration_id: written.id }, details: details(written) }))
  const audit = (request: FastifyRequest, action: string, integrationId: string, details: Record<string, string | number | boolean> = {}) =>
    auditOf(deps, request).record({ action, target: { integration_id: integrationId }, details })

  const showList = async (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    extra: { created?: Parameters<typeof listBody>[2]; form?: FormState; flash?: string | null } = {},
  ) => {
    const { account } = sessionOf(request)
    const { data } = await listIntegrations(deps, account.id)
    // health at a glance: one read of its health counters per endpoint, for the first HEALTH_ON_LIST
    const health = new Map<string, EndpointHealth>(
      await Promise.all(data.slice(0, HEALTH_ON_LIST).map(async (i) => [i.id, await readEndpointHealth(deps, i.id)] as const)),
    )
    return sendPage(reply, {
      status: status,
      account,
      current: WEBHOOKS_PATH,
      flash: extra.flash,
      error: extra.form ? 'The webhook was not added.' : null,
      title: 'Webhooks',
      body: listBody(account, data, extra.created ?? null, extra.form ?? null, health),
    })
  }

  const showDetail = async (
    request: FastifyRequest,
    reply: FastifyReply,
    integrationId: string,
    status: number,
    extra: { shown?: ShownSecret; form?: FormState; flash?: string | null; error?: string | null; filter?: LogFilter } = {},
  ) => {
    const { account } = sessionOf(request)
    const integration = await getIntegration(deps, account.id, integrationId)
    const filter = extra.filter ?? NO_FILTER
    const log = await listDeliveryLog(deps, account.id, integrationId, {
      cursor: filter.cursor,
      limit: PAGE,
      status: filter.status,
      kind: filter.kind,
      eventId: filter.eventId,
      statusCode: codeFilterOf(filter.code),
      from: filter.from,
      to: filter.to,
    })
    return sendPage(reply, {
      status: status,
      account,
      current: WEBHOOKS_PATH,
      flash: extra.flash,
      error: extra.error ?? (extra.form ? 'The changes were not saved.' : null),
      title: `Webhook ${endpointTitle(integration)}`,
      body: detailBody({
        account,
        integration,
        log,
        filter,
        shown: extra.shown ?? null,
        form: extra.form ?? null,
        health: await readEndpointHealth(deps, integrationId),
        pageSize: PAGE,
      }),
    })
  }

  scope.get(WEBHOOKS_PATH, { schema: { hide: true, querystring: ListQuery } }, async (request, reply) => showList(request, reply, 200))

  scope.post(WEBHOOKS_PATH, { schema: { hide: true } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { state, body } = integrationForm(formOf(request.body))
    let created
    try {
      if (state.url.length === 0 || state.url.length > 2048)
        throw new AppError('invalid_payload', { issues: [{ path: '/url', code: 'url', message: 'give an endpoint URL of at most 2048 characters' }] })
      const withEntry = audited(request, 'integration.created', (i) => ({
        host: hostOf(i.url),
        payload_version: i.payload_version,
        contact_handles: i.tiers.contact_handles,
        sensitive_traits: i.tiers.sensitive_traits,
      }))
      await consumeWebhookActionQuota(deps, 'integration_create', account.id)
      created = await createIntegration(withEntry, account.id, body)
    } catch (err) {
      const limited = limitRefusal(err, 'integration_create')
      if (limited) return showList(request, reply.header('retry-after', limited.retryAfter), 429, { form: { ...state, error: limited.text } })
      return showList(request, reply, 400, { form: { ...state, error: refusal(err) } })
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

  scope.get(`${WEBHOOKS_PATH}/:integrationId`, { schema: { hide: true, params: IntegrationParams, querystring: DetailQuery } }, async (request, reply) => {
    const q = request.query
    // the filter form sends every field: an empty one means "any"
    const eventId = q.event_id?.trim()
    const page = pageNumberOf(q.page)
    if (page === null) {
      const { account } = sessionOf(request)
      return sendPage(reply, {
        status: 400,
        account,
        current: WEBHOOKS_PATH,
        error: BAD_PAGE_LINK,
        title: 'Webhook',
        body: html`<p><a href="${webhookPath(request.params.integrationId)}#deliveries">Newest deliveries</a></p>`,
      })
    }
    const filter: LogFilter = {
      page,
      status: q.status || undefined,
      kind: q.kind || undefined,
      eventId: eventId || undefined,
      cursor: q.cursor || undefined,
      code: q.code || undefined,
      from: instantOf(q.from),
      to: instantOf(q.to),
    }
    return showDetail(request, reply, request.params.integrationId, 200, { filter })
  })

  scope.post(`${WEBHOOKS_PATH}/:integrationId`, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    const fields = formOf(request.body)
    const { state, body, described } = integrationForm(fields)
    const update: UpdateIntegrationBody = { ...body, ...described, active: fieldValue(fields, 'active') === 'on' }
    // switching an active webhook off is destructive (nothing is delivered meanwhile): the other
    // fields are saved with the webhook still on, then a 303 leads to the confirmation page, whose
    // form alone switches it off (every form answers a redirect; nothing typed is lost)
    let askToDisable = false
    if (!update.active && !isConfirmed(fields)) {
      const current = await getIntegration(deps, account.id, integrationId)
      if (current.active) {
        update.active = true
        askToDisable = true
      }
    }
    try {
      if (state.url.length === 0 || state.url.length > 2048)
        throw new AppError('invalid_payload', { issues: [{ path: '/url', code: 'url', message: 'give an endpoint URL of at most 2048 characters' }] })
      const withEntry = audited(request, 'integration.updated', (i) => ({
        host: hostOf(i.url),
        payload_version: i.payload_version,
        contact_handles: i.tiers.contact_handles,
        sensitive_traits: i.tiers.sensitive_traits,
        active: i.active,
      }))
      await updateIntegration(withEntry, account.id, integrationId, update)
    } catch (err) {
      if (isAppError(err) && err.status === 404) throw err
      return showDetail(request, reply, integrationId, 400, { form: { ...state, error: refusal(err) } })
    }
    if (askToDisable) return redirectTo(reply, `${webhookPath(integrationId)}/disable`, 'integration-updated')
    return redirectTo(reply, webhookPath(integrationId), 'integration-updated')
  })

  const disablePath = `${WEBHOOKS_PATH}/:integrationId/disable`
  scope.get(disablePath, { schema: { hide: true, params: IntegrationParams, querystring: ListQuery } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const current = await getIntegration(deps, account.id, request.params.integrationId)
    if (!current.active) return redirectTo(reply, webhookPath(current.id))
    const saved = flashOf(request)
    return sendConfirmation(request, reply, {
      title: 'Disable this webhook?',
      what: html`${saved ? html`<p class="flash" role="status">${saved} It is still on.</p>` : ''}<p><strong>${endpointTitle(current)}</strong> will stop receiving events: nothing is delivered to it while it is disabled, and deliveries waiting for a retry end as failed. You can re-enable it on its page.</p>`,
      action: `${webhookPath(current.id)}/disable`,
      button: 'Disable webhook',
      cancel: webhookPath(current.id),
    })
  })
  scope.post(disablePath, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    // a post without the confirmation (crafted, or an old page) goes to the question, never acts
    if (!isConfirmed(formOf(request.body))) return redirectTo(reply, `${webhookPath(integrationId)}/disable`)
    await updateIntegration(
      audited(request, 'integration.updated', (i) => ({ host: hostOf(i.url), active: i.active })),
      account.id,
      integrationId,
      { active: false },
    )
    return redirectTo(reply, webhookPath(integrationId), 'integration-updated')
  })

  // an integration the platform disabled (410) or the tenant switched off, on again
  scope.post(`${WEBHOOKS_PATH}/:integrationId/enable`, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    await updateIntegration(audited(request, 'integration.enabled'), account.id, integrationId, { active: true })
    return redirectTo(reply, webhookPath(integrationId), 'integration-updated')
  })

  scope.post(`${WEBHOOKS_PATH}/:integrationId/secret/reveal`, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    const current = await currentSigningSecret(deps, account.id, integrationId)
    await audit(request, 'integration.secret_revealed', integrationId)
    return redirectToReveal(deps, request, reply, {
      title: 'Signing secret',
      label: 'The current signing secret',
      secret: current.secret,
      note: previousNote(current.previous_expires_at),
      back: { path: webhookPath(integrationId), text: 'Back to the webhook' },
    })
  })

  scope.get(`${WEBHOOKS_PATH}/:integrationId/secret/rotate-now`, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const current = await getIntegration(deps, account.id, request.params.integrationId)
    return sendConfirmation(request, reply, {
      title: 'Rotate the secret and stop the old one now?',
      what: html`<p>Deliveries to <strong>${endpointTitle(current)}</strong> are signed with a new secret at once, and the current one stops signing immediately: a receiver still verifying with it refuses every delivery until you give it the new secret. A grace period (24 hours, 1 hour or 7 days) avoids that.</p>`,
      action: `${webhookPath(current.id)}/secret/rotate`,
      fields: { grace_seconds: '0' },
      button: 'Rotate and stop the old secret now',
      cancel: webhookPath(current.id),
    })
  })

  scope.post(`${WEBHOOKS_PATH}/:integrationId/secret/rotate`, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    const raw = fieldValue(formOf(request.body), 'grace_seconds')
    const grace = raw === '' ? DEFAULT_SECRET_GRACE_SECONDS : Number(raw)
    if (!GRACE_CHOICES.has(grace)) throw new AppError('invalid_payload')
    // "stop it now" ends the secret receivers verify with at once: a 303 to the question first
    if (grace === 0 && !isConfirmed(formOf(request.body))) {
      await getIntegration(deps, account.id, integrationId)
      return redirectTo(reply, `${webhookPath(integrationId)}/secret/rotate-now`)
    }
    const rotated = await rotateSigningSecret(
      audited(request, 'integration.secret_rotated', () => ({ grace_seconds: grace })),
      account.id,
      integrationId,
      grace,
    )
    // a redirect: a reload does not rotate again (which would end the secret just copied)
    return redirectToReveal(deps, request, reply, {
      title: 'Signing secret rotated',
      label: 'The new signing secret',
      secret: rotated.signing_secret,
      note: `every delivery is signed with it from now on. ${previousNote(rotated.previous_expires_at)}`,
      back: { path: webhookPath(integrationId), text: 'Back to the webhook' },
    })
  })

  scope.post(`${WEBHOOKS_PATH}/:integrationId/test`, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    let delivery
    try {
      await consumeWebhookActionQuota(deps, 'test_event', account.id)
      delivery = await sendTestEvent(deps, account.id, integrationId)
    } catch (err) {
      const limited = limitRefusal(err, 'test_event')
      if (limited) return showDetail(request, reply.header('retry-after', limited.retryAfter), integrationId, 429, { error: limited.text })
      if (isAppError(err) && err.status === 409)
        return showDetail(request, reply, integrationId, 409, { error: 'Only an active version 2 webhook receives test events.' })
      throw err
    }
    await audit(request, 'integration.test_event_sent', integrationId, { delivery_id: delivery.id, event_id: delivery.event_id })
    return redirectTo(reply, webhookPath(integrationId), 'test-sent')
  })

  scope.post(`${WEBHOOKS_PATH}/:integrationId/deliveries/:deliveryId/replay`, { schema: { hide: true, params: DeliveryParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId, deliveryId } = request.params
    try {
      await consumeWebhookActionQuota(deps, 'replay', account.id)
      await replayDeliveryFor(deps, account.id, integrationId, deliveryId)
    } catch (err) {
      const limited = limitRefusal(err, 'replay')
      if (limited) return showDetail(request, reply.header('retry-after', limited.retryAfter), integrationId, 429, { error: limited.text })
      if (isAppError(err) && err.status === 409)
        return showDetail(request, reply, integrationId, 409, { error: 'This webhook is disabled: re-enable it before replaying.' })
      throw err
    }
    await audit(request, 'delivery.replayed', integrationId, { delivery_id: deliveryId })
    return redirectTo(reply, webhookPath(integrationId), 'delivery-replayed')
  })
}

/** Webhooks: endpoints, their health, the delivery log and debugger, recovery. */
export const webhooksScreen: ScreenDeclaration = {
  path: WEBHOOKS_PATH,
  nav: 'Webhooks',
  flashes: {
    'integration-created': 'Webhook created.',
    'integration-updated': 'Webhook updated.',
    'integration-deleted': 'Webhook deleted.',
    'delivery-replayed': 'Delivery queued again.',
    'test-sent': 'Test event queued.',
    'waiting-retried': 'The deliveries waiting for a retry are queued to be sent now.',
    'waiting-partly-retried':
      'The replay limit was reached: some deliveries waiting for a retry are queued to be sent now, the rest keep waiting. Retry everything waiting again in a minute.',
  },
  register: registerWebhookScreens,
}
