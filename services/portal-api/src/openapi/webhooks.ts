import { buildContractSchemaDocument } from '@lsv/shared/contract/schema-document.ts'

/**
 * The contract's outbound event (section 6) for the OpenAPI document: the `$defs` of the contract
 * schema become `components.schemas` (refs rewritten to `#/components/schemas/...`) and
 * `visitor.identified` is described under the top-level `webhooks` (OpenAPI 3.1).
 */
export function contractComponentSchemas(): Record<string, unknown> {
  const defs = buildContractSchemaDocument().$defs
  const text = JSON.stringify(defs).replaceAll('"#/$defs/', '"#/components/schemas/')
  return JSON.parse(text) as Record<string, unknown>
}

export function outboundWebhooks(): Record<string, unknown> {
  return {
    visitorIdentifiedV2: {
      post: {
        operationId: 'visitorIdentifiedV2',
        tags: ['outbound webhook'],
        summary: '`visitor.identified` (v2, opt-in per integration through `payload_version`)',
        description:
          'Sent by POST to the customer endpoint of an integration whose `payload_version` selects v2 when a visitor is identified. Status 200 acknowledges the delivery.',
        parameters: [
          { name: 'X-Service-Signature', in: 'header', required: true, description: 'signature over the exact body bytes', schema: { type: 'string' } },
          { name: 'X-Service-Idempotency-Key', in: 'header', required: true, description: 'equal to the body `id` (the visit-event id)', schema: { type: 'string' } },
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
