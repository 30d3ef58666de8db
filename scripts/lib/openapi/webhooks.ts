/**
 * The contract's outbound event (section 6) under the top-level `webhooks` (OpenAPI 3.1):
 * `visitor.identified`, as a receiver sees the request. The signature headers are the ones a
 * receiver verifies (docs/webhooks.md): the contract's `X-Service-Signature` and
 * `X-Service-Idempotency-Key`, and the same signature in the Standard Webhooks headers
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`) that receiver libraries read.
 */

const header = (name: string, description: string, schema: Record<string, unknown> = { type: 'string' }) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema,
})

export function outboundWebhooks(): Record<string, unknown> {
  return {
    visitorIdentifiedV2: {
      post: {
        operationId: 'visitorIdentifiedV2',
        tags: ['outbound webhook'],
        summary: '`visitor.identified` (v2, opt-in per integration through `payload_version`)',
        description:
          'Sent by POST to the customer endpoint of an integration whose `payload_version` selects v2 when a visitor is identified. Status 200 acknowledges the delivery; anything else is retried (docs/webhooks.md). ' +
          "The request carries no credential: the receiver authenticates it by verifying the signature (HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<exact body bytes>` with the integration's signing secret, Standard Webhooks).",
        // no credential scheme: authenticity comes from the signature headers below
        security: [],
        parameters: [
          header(
            'webhook-id',
            'Standard Webhooks message id, the same on every retry: the body `id` (the visit-event id) as it is, or, when that id holds a `.`, `msg_sha256_` + base64url(SHA-256 of the id)',
          ),
          header('webhook-timestamp', 'Standard Webhooks timestamp: Unix seconds when this attempt was signed', { type: 'string', pattern: '^[0-9]+$' }),
          header('webhook-signature', 'Standard Webhooks signature: `v1,<base64 HMAC-SHA256>`, several space-separated during a secret rotation', {
            type: 'string',
            pattern: '^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$',
          }),
          header(
            'X-Service-Signature',
            "HMAC-SHA256 with the integration's signing secret over `<webhook-id>.<webhook-timestamp>.<exact body bytes>` (not over the body alone), sent as `v1,<base64>` (several space-separated during a secret rotation); the same value as `webhook-signature`",
          ),
          header('X-Service-Idempotency-Key', 'equal to the body `id` (the visit-event id)'),
        ],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/WebhookEventV2' } } },
        },
        responses: { 200: { description: 'the delivery was accepted' } },
      },
    },
  }
}
