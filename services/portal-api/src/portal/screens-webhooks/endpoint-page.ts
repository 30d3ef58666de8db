import { Type } from 'typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { getIntegration } from '@lsv/shared/domain/tenants/integrations.ts'
import { listDeliveryLog } from '@lsv/shared/domain/webhooks/delivery-log.ts'
import { readEndpointHealth } from '@lsv/shared/domain/webhooks/endpoint-health.ts'
import { secretGraceEndOf } from '@lsv/shared/domain/webhooks/secret-rotation.ts'
import { html, redirectTo, sendPage } from '../kit/page.ts'
import { BAD_PAGE_LINK, PageLinkValue, pageNumberOf } from '../kit/pager.ts'
import { sessionOf } from '../session.ts'
import { CodeInput, codeFilterOf, instantOf, TimeInput } from './delivery-filters.ts'
import { DELIVERY_KINDS, DELIVERY_LOG_ID, DELIVERY_STATUSES, type LogFilter } from './delivery-log-views.ts'
import { endpointTitle } from './endpoint-fields.ts'
import { IntegrationParams } from './schemas.ts'
import { WEBHOOKS_PATH, webhookPath } from './paths.ts'
import { detailBody, type FormState } from './views.ts'

const PAGE = 20

/** a delivery id as deliveryIdFor makes it (`dlv_` and 24 base64url characters) */
const DeliveryIdValue = Type.String({ maxLength: 64, pattern: '^dlv_[A-Za-z0-9_-]+$' })

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
  /** the delivery "Send test event" just made (its redirect names it): marked in the log */
  sent: Type.Optional(DeliveryIdValue),
})
const NO_FILTER: LogFilter = { status: undefined, kind: undefined, eventId: undefined, cursor: undefined }

/** What a webhook's page answers besides its stored state: a refused form, an error, the log's filters. */
interface DetailExtra {
  form?: FormState
  error?: string | null
  filter?: LogFilter
  sent?: string
}

/**
 * The end of the signing secret's grace, from the cached lookup (the record the dispatcher signs
 * from; a write through this instance clears it): no store read of its own on a page view.
 */
async function graceEndOf(deps: PlatformDeps, integrationId: string): Promise<string | null> {
  const record = await deps.tenantLookups.getIntegration(integrationId)
  return record ? secretGraceEndOf(record, deps.clock.now()) : null
}

/** A webhook's page (views.ts detailBody) with this status: the page itself, or a refused action's answer. */
export async function sendDetail(
  deps: PlatformDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  integrationId: string,
  status: number,
  extra: DetailExtra = {},
) {
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
    status,
    account,
    current: WEBHOOKS_PATH,
    // after "Send test event" the log says it where the browser lands (#delivery-log), not twice
    ...(extra.sent === undefined ? {} : { flash: null }),
    error: extra.error ?? (extra.form ? 'The changes were not saved.' : null),
    title: `Webhook ${endpointTitle(integration)}`,
    body: detailBody({
      account,
      integration,
      log,
      filter,
      form: extra.form ?? null,
      health: await readEndpointHealth(deps, integrationId),
      pageSize: PAGE,
      sent: extra.sent ?? null,
      secretGraceEnd: await graceEndOf(deps, integrationId),
      loopbackAllowed: deps.config.allowLoopbackWebhooks,
    }),
  })
}

/**
 * Post/redirect/get to the webhook's delivery log: the flash, the delivery just made when there is
 * one, and `#delivery-log`, so the browser lands on the rows (the result), not the top of the page.
 */
export function redirectToLog(reply: FastifyReply, integrationId: string, flash: string, sent?: string): FastifyReply {
  const query = new URLSearchParams({ ...(sent === undefined ? {} : { sent }), flash })
  return redirectTo(reply, `${webhookPath(integrationId)}?${query}#${DELIVERY_LOG_ID}`)
}

/** `GET /portal/webhooks/{id}`: the page, its log filtered and paged as the query says. */
export function registerEndpointPage(scope: App, deps: PlatformDeps): void {
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
    return sendDetail(deps, request, reply, request.params.integrationId, 200, { filter, ...(q.sent ? { sent: q.sent } : {}) })
  })
}
