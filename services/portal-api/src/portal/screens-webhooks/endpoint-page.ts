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
import { codeFilterOf, codeFilterValueOf, FilterText, filterInstantOf } from './delivery-filters.ts'
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
  // checked by the page, which says what is wrong with an edited one (badFilterWords)
  code: Type.Optional(FilterText),
  from: Type.Optional(FilterText),
  to: Type.Optional(FilterText),
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
    // an edited filter (code=999, from=yesterday) is named in words and left out of the log shown
    const code = codeFilterValueOf(q.code)
    const from = filterInstantOf(q.from)
    const to = filterInstantOf(q.to)
    const filter: LogFilter = {
      page,
      status: q.status || undefined,
      kind: q.kind || undefined,
      eventId: eventId || undefined,
      cursor: q.cursor || undefined,
      code: code ?? undefined,
      from: from ?? undefined,
      to: to ?? undefined,
    }
    const problems = badFilterWords({ code: code === null ? q.code : undefined, from: from === null ? q.from : undefined, to: to === null ? q.to : undefined })
    return sendDetail(deps, request, reply, request.params.integrationId, problems === null ? 200 : 400, {
      filter,
      ...(problems === null ? {} : { error: problems }),
      ...(q.sent ? { sent: q.sent } : {}),
    })
  })
}

/**
 * What is wrong with the log filters an address carried (each the text as typed, or undefined when
 * it was fine), in sentences, or null when nothing is: the page then shows the log without them.
 */
function badFilterWords(bad: { code: string | undefined; from: string | undefined; to: string | undefined }): string | null {
  const sentences = [
    bad.code === undefined
      ? null
      : `The HTTP status “${bad.code}” is not one the log can be filtered by: choose one from the list (such as 4xx, or no answer) or give an exact code from 100 to 599, such as 404.`,
    bad.from === undefined ? null : `The From time “${bad.from}” is not a date and time: give one such as 2026-03-01T10:00 (UTC).`,
    bad.to === undefined ? null : `The Before time “${bad.to}” is not a date and time: give one such as 2026-03-01T10:00 (UTC).`,
  ].filter((s): s is string => s !== null)
  if (sentences.length === 0) return null
  return `${sentences.join(' ')} The log below is shown without ${sentences.length === 1 ? 'that filter' : 'those filters'}.`
}
