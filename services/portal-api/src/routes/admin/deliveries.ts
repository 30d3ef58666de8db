import { Type } from 'typebox'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { errorResponses } from '@lsv/shared/contract/errors.ts'
import { IntegrationParams } from '@lsv/shared/contract/admin.ts'
import { authenticateOperator } from '@lsv/shared/domain/auth/authenticate-api-key.ts'
import { listDeliveryLog, replayDeliveryFor } from '@lsv/shared/domain/webhooks/delivery-log.ts'
import { consumeWebhookActionQuota } from '@lsv/shared/domain/webhooks/rate-limit.ts'

const Attempt = Type.Object(
  {
    attempt: Type.Integer(),
    at: Type.String({ format: 'date-time' }),
    status_code: Type.Union([Type.Integer(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    latency_ms: Type.Integer(),
    response_excerpt: Type.Union([Type.String(), Type.Null()]),
    // bounded and redacted when stored (adapters/outbound-http/response-headers.ts); absent on older attempts
    response_headers: Type.Optional(Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()])),
  },
  { additionalProperties: false },
)

const DeliveryEntry = Type.Object(
  {
    id: Type.String(),
    event_id: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('retrying'), Type.Literal('succeeded'), Type.Literal('failed')]),
    attempts: Type.Array(Attempt),
    next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    // the visit's trace (OpenTelemetry); absent on deliveries stored before tracing
    trace_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'DeliveryLogEntry', additionalProperties: false },
)

/** The delivery log of one integration and its replay (management-api.md). */
export function registerDeliveryAdminRoutes(app: App, deps: PlatformDeps): void {
  app.get(
    '/api/v1/admin/accounts/:accountId/integrations/:integrationId/deliveries',
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'listDeliveries',
        tags: ['management'],
        summary: 'Delivery log of an integration, newest first',
        security: [{ operatorToken: [] }],
        params: IntegrationParams,
        querystring: Type.Object({
          cursor: Type.Optional(Type.String({ maxLength: 200, description: 'opaque `next_cursor` of the previous page' })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
          status: Type.Optional(
            Type.Union([Type.Literal('pending'), Type.Literal('retrying'), Type.Literal('succeeded'), Type.Literal('failed')], {
              description: 'only deliveries in this status',
            }),
          ),
          kind: Type.Optional(
            Type.Union([Type.Literal('test'), Type.Literal('real')], { description: '`test`: only test events (ids `evt_test_…`); `real`: only the others' }),
          ),
          event_id: Type.Optional(
            Type.String({ minLength: 1, maxLength: 256, description: 'only the delivery of this event (exact id; at most one, no cursor)' }),
          ),
        }),
        response: {
          200: Type.Object(
            {
              object: Type.Literal('list'),
              data: Type.Array(DeliveryEntry),
              has_more: Type.Boolean(),
              next_cursor: Type.Union([Type.String(), Type.Null()]),
            },
            { additionalProperties: false },
          ),
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request) => {
      await authenticateOperator(deps, request.headers.authorization)
      const { accountId, integrationId } = request.params
      const q = request.query
      return listDeliveryLog(deps, accountId, integrationId, { cursor: q.cursor, limit: q.limit ?? 25, status: q.status, kind: q.kind, eventId: q.event_id })
    },
  )

  app.post(
    '/api/v1/admin/accounts/:accountId/integrations/:integrationId/deliveries/:deliveryId/replay',
    {
      schema: {
        operationId: 'replayDelivery',
        tags: ['management'],
        summary: 'Send a kept delivery again (a new run of attempts)',
        security: [{ operatorToken: [] }],
        params: Type.Object({ ...IntegrationParams.properties, deliveryId: Type.String({ minLength: 1, maxLength: 128 }) }),
        response: {
          202: Type.Object({ ok: Type.Literal(true), id: Type.String(), status: Type.String() }, { additionalProperties: false }),
          ...errorResponses(401, 404, 409, 429),
        },
      },
    },
    async (request, reply) => {
      await authenticateOperator(deps, request.headers.authorization)
      const { accountId, integrationId, deliveryId } = request.params
      // 60 a minute per account (docs/webhooks.md, "Limits on actions that send traffic")
      await consumeWebhookActionQuota(deps, 'replay', accountId)
      const delivery = await replayDeliveryFor(deps, accountId, integrationId, deliveryId)
      return reply.code(202).send({ ok: true, id: delivery.id, status: delivery.status })
    },
  )
}
