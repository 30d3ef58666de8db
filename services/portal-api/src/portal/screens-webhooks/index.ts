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
import { recordAudit } from '@lsv/shared/domain/audit/record.ts'
import { redirectTo, sendScreen } from '../layout.ts'
import { flashText } from '../flash.ts'
import { actorOf, sessionOf } from '../session.ts'
import { formOf, fieldValue, type FormFields } from '../forms.ts'
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

const PAGE = 20
const GRACE_CHOICES = new Set([0, 3600, 86_400, 604_800])

const IntegrationParams = Type.Object({ integrationId: Type.String({ minLength: 1, maxLength: 128 }) })
const DeliveryParams = Type.Object({ integrationId: Type.String({ minLength: 1, maxLength: 128 }), deliveryId: Type.String({ minLength: 1, maxLength: 128 }) })
const ListQuery = Type.Object({ flash: Type.Optional(Type.String({ maxLength: 64 })) })
const DetailQuery = Type.Object({
  flash: Type.Optional(Type.String({ maxLength: 64 })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
  // '' is "any" from the filter form
  status: Type.Optional(Type.Union([Type.Literal(''), ...DELIVERY_STATUSES.map((s) => Type.Literal(s))])),
  kind: Type.Optional(Type.Union([Type.Literal(''), ...DELIVERY_KINDS.map((k) => Type.Literal(k))])),
  event_id: Type.Optional(Type.String({ maxLength: 256 })),
})
const NO_FILTER: LogFilter = { status: undefined, kind: undefined, eventId: undefined, cursor: undefined }

/** The form's fields as the management API's body (the same domain function validates them). */
function integrationForm(fields: FormFields | undefined): { state: Omit<FormState, 'error'>; body: CreateIntegrationBody } {
  const url = fieldValue(fields, 'url').trim()
  const payloadVersion = fieldValue(fields, 'payload_version') === '1' ? '1' : '2'
  const contactHandles = fieldValue(fields, 'contact_handles') === 'on'
  const sensitiveTraits = fieldValue(fields, 'sensitive_traits') === 'on'
  return {
    state: { url, payloadVersion, contactHandles, sensitiveTraits },
    body: { url, payload_version: payloadVersion === '1' ? 1 : 2, tiers: { contact_handles: contactHandles, sensitive_traits: sensitiveTraits } },
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
 * Webhooks (docs/portal.md, "Webhooks"): the account's integrations, created and changed through
 * the management API's domain functions; the signing secret revealed or rotated with a grace; the
 * delivery log with filters (status, test or real events, one event id) and paging; replay; a
 * test event. Every change is in the audit log (never the secret).
 */
export function registerWebhookScreens(scope: App, deps: PlatformDeps): void {
  const audit = (request: FastifyRequest, action: string, integrationId: string, details: Record<string, string | number | boolean> = {}) => {
    const session = sessionOf(request)
    return recordAudit(deps, { account_id: session.account.id, actor: actorOf(session), action, target: { integration_id: integrationId }, details })
  }

  const showList = async (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    extra: { created?: Parameters<typeof listBody>[2]; form?: FormState; flash?: string | null } = {},
  ) => {
    const { account } = sessionOf(request)
    const { data } = await listIntegrations(deps, account.id)
    return sendScreen(
      reply,
      status,
      { account, current: WEBHOOKS_PATH, flash: extra.flash ?? null, error: extra.form ? 'The webhook was not added.' : null },
      'Webhooks',
      listBody(account, data, extra.created ?? null, extra.form ?? null),
    )
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
    })
    return sendScreen(
      reply,
      status,
      { account, current: WEBHOOKS_PATH, flash: extra.flash ?? null, error: extra.error ?? (extra.form ? 'The changes were not saved.' : null) },
      `Webhook ${integration.url}`,
      detailBody(account, integration, log, filter, extra.shown ?? null, extra.form ?? null),
    )
  }

  scope.get(WEBHOOKS_PATH, { schema: { hide: true, querystring: ListQuery } }, async (request, reply) =>
    showList(request, reply, 200, { flash: flashText(request.query.flash) }),
  )

  scope.post(WEBHOOKS_PATH, { schema: { hide: true } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { state, body } = integrationForm(formOf(request.body))
    let created
    try {
      if (state.url.length === 0 || state.url.length > 2048)
        throw new AppError('invalid_payload', { issues: [{ path: '/url', code: 'url', message: 'give an endpoint URL of at most 2048 characters' }] })
      created = await createIntegration(deps, account.id, body)
    } catch (err) {
      return showList(request, reply, 400, { form: { ...state, error: refusal(err) } })
    }
    await audit(request, 'integration.created', created.id, {
      host: hostOf(created.url),
      payload_version: created.payload_version,
      contact_handles: created.tiers.contact_handles,
      sensitive_traits: created.tiers.sensitive_traits,
    })
    const { signing_secret: secret, ...integration } = created
    // the secret is on this answer only (a redirect would have to carry it in the URL)
    return showList(request, reply, 201, {
      created: { integration, secret: { secret, why: 'created', previousExpiresAt: null } },
      flash: flashText('integration-created'),
    })
  })

  scope.get(`${WEBHOOKS_PATH}/:integrationId`, { schema: { hide: true, params: IntegrationParams, querystring: DetailQuery } }, async (request, reply) => {
    const q = request.query
    // the filter form sends every field: an empty one means "any"
    const eventId = q.event_id?.trim()
    const filter: LogFilter = {
      status: q.status || undefined,
      kind: q.kind || undefined,
      eventId: eventId || undefined,
      cursor: q.cursor || undefined,
    }
    return showDetail(request, reply, request.params.integrationId, 200, { flash: flashText(q.flash), filter })
  })

  scope.post(`${WEBHOOKS_PATH}/:integrationId`, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    const fields = formOf(request.body)
    const { state, body } = integrationForm(fields)
    const update: UpdateIntegrationBody = { ...body, active: fieldValue(fields, 'active') === 'on' }
    try {
      if (state.url.length === 0 || state.url.length > 2048)
        throw new AppError('invalid_payload', { issues: [{ path: '/url', code: 'url', message: 'give an endpoint URL of at most 2048 characters' }] })
      const updated = await updateIntegration(deps, account.id, integrationId, update)
      await audit(request, 'integration.updated', integrationId, {
        host: hostOf(updated.url),
        payload_version: updated.payload_version,
        contact_handles: updated.tiers.contact_handles,
        sensitive_traits: updated.tiers.sensitive_traits,
        active: updated.active,
      })
    } catch (err) {
      if (isAppError(err) && err.status === 404) throw err
      return showDetail(request, reply, integrationId, 400, { form: { ...state, error: refusal(err) } })
    }
    return redirectTo(reply, webhookPath(integrationId), 'integration-updated')
  })

  // an integration the platform disabled (410) or the tenant switched off, on again
  scope.post(`${WEBHOOKS_PATH}/:integrationId/enable`, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    await updateIntegration(deps, account.id, integrationId, { active: true })
    await audit(request, 'integration.enabled', integrationId)
    return redirectTo(reply, webhookPath(integrationId), 'integration-updated')
  })

  scope.post(`${WEBHOOKS_PATH}/:integrationId/secret/reveal`, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    const current = await currentSigningSecret(deps, account.id, integrationId)
    await audit(request, 'integration.secret_revealed', integrationId)
    return showDetail(request, reply, integrationId, 200, {
      shown: { secret: current.secret, why: 'revealed', previousExpiresAt: current.previous_expires_at },
    })
  })

  scope.post(`${WEBHOOKS_PATH}/:integrationId/secret/rotate`, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    const raw = fieldValue(formOf(request.body), 'grace_seconds')
    const grace = raw === '' ? DEFAULT_SECRET_GRACE_SECONDS : Number(raw)
    if (!GRACE_CHOICES.has(grace)) throw new AppError('invalid_payload')
    const rotated = await rotateSigningSecret(deps, account.id, integrationId, grace)
    await audit(request, 'integration.secret_rotated', integrationId, { grace_seconds: grace })
    return showDetail(request, reply, integrationId, 200, {
      shown: { secret: rotated.signing_secret, why: 'rotated', previousExpiresAt: rotated.previous_expires_at },
      flash: 'Signing secret rotated.',
    })
  })

  scope.post(`${WEBHOOKS_PATH}/:integrationId/test`, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    let delivery
    try {
      delivery = await sendTestEvent(deps, account.id, integrationId)
    } catch (err) {
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
      await replayDeliveryFor(deps, account.id, integrationId, deliveryId)
    } catch (err) {
      if (isAppError(err) && err.status === 409)
        return showDetail(request, reply, integrationId, 409, { error: 'This webhook is disabled: re-enable it before replaying.' })
      throw err
    }
    await audit(request, 'delivery.replayed', integrationId, { delivery_id: deliveryId })
    return redirectTo(reply, webhookPath(integrationId), 'delivery-replayed')
  })
}
