import { Type, type Static } from 'typebox'

/**
 * The alert a tenant's alert webhook receives (Settings, "Alerts"; docs/webhooks.md, "Endpoint
 * alerts"): one signed POST per change of one of its endpoints' state, Standard Webhooks headers
 * as every delivery (`webhook-id` is `id`), signed with the alert webhook's own secret. Versioned
 * by `v`; a receiver ignores members it does not know. Ids are deterministic
 * (domain/alerts/alert.ts), so a change observed twice is one delivery.
 */
export const ENDPOINT_ALERT_VERSION = 1

const Timestamp = Type.String({ format: 'date-time' })

const Endpoint = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 256, description: 'the webhook endpoint (integration) id' }),
    url: Type.String({ maxLength: 2048, description: "the endpoint's URL, its query and userinfo replaced by `[redacted]`" }),
    name: Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description: "the tenant's label for the endpoint" }),
  },
  { additionalProperties: false },
)

const Common = {
  v: Type.Literal(ENDPOINT_ALERT_VERSION),
  id: Type.String({ pattern: '^alrt_[A-Za-z0-9_-]{1,64}$', description: 'unique per alert; the `webhook-id` header' }),
  occurred_at: Timestamp,
  account_id: Type.String({ minLength: 1, maxLength: 256 }),
  endpoint: Endpoint,
  /** where the tenant sees the endpoint: its page on the portal */
  portal_url: Type.String({ maxLength: 2048, description: "the endpoint's page on the portal" }),
  /** true for the Settings screen's "Send a test alert": nothing happened to the endpoint */
  test: Type.Boolean({ description: 'true for a test alert sent from the portal (the endpoint is not affected)' }),
}

export const EndpointAlert = Type.Union(
  [
    Type.Object(
      {
        ...Common,
        type: Type.Literal('endpoint.failing'),
        since: Timestamp,
        consecutive_failures: Type.Integer({ minimum: 1, description: 'newest deliveries in a row whose latest attempt failed' }),
        threshold: Type.Integer({ minimum: 1, description: 'the failure threshold (consecutive failing deliveries)' }),
        last_error: Type.Union([Type.String({ maxLength: 512 }), Type.Null()], { description: 'the last attempt: HTTP status or transport error' }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        ...Common,
        type: Type.Literal('endpoint.disabled'),
        since: Timestamp,
        reason: Type.String({ maxLength: 512, description: 'why the platform disabled it, e.g. `endpoint answered 410`' }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        ...Common,
        type: Type.Literal('endpoint.recovered'),
        since: Timestamp,
      },
      { additionalProperties: false },
    ),
  ],
  { title: 'EndpointAlert' },
)

export type EndpointAlert = Static<typeof EndpointAlert>
