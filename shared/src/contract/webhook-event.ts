import { Type, type Static } from 'typebox'
import { ContractVersionLiteral, NullableString, StringEnum } from './common.ts'
import { Contact, EmittedContact } from './contact.ts'
import { FieldPolicy } from './field-policy.ts'

/** The body of the outbound `visitor.identified` webhook, v2 (contract section 6). */

const WEBHOOK_EVENT_TYPE = 'visitor.identified' as const

export const WebhookVisit = Type.Object(
  {
    captured_url: Type.Optional(NullableString()),
    domain_id: Type.Optional(NullableString()),
    referrer: Type.Optional(NullableString()),
    visitor_id: Type.Optional(NullableString()),
    seen_at: Type.Optional(NullableString({ format: 'date-time' })),
  },
  { title: 'WebhookVisit' },
)

export const WebhookEventV2 = Type.Object(
  {
    event: Type.Literal(WEBHOOK_EVENT_TYPE),
    contract_version: ContractVersionLiteral(),
    id: Type.String({ description: 'visit-event id; the idempotency key value (`X-Service-Idempotency-Key`)' }),
    emitted_at: Type.String({ format: 'date-time' }),
    tier: StringEnum(['company', 'person']),
    is_repeat: Type.Boolean(),
    subject: Contact,
    field_policy: Type.Optional(FieldPolicy),
    visit: Type.Optional(WebhookVisit),
    classification: Type.Optional(Type.String({ description: 'velocity-rule label; omitted when empty' })),
    served_from: Type.Optional(Type.String({ description: 'omitted when empty; `cache` on a local serve of a recognized return' })),
  },
  { title: 'WebhookEventV2', additionalProperties: false },
)

export type WebhookVisit = Static<typeof WebhookVisit>
export type WebhookEventV2 = Static<typeof WebhookEventV2>

/**
 * The body as buildWebhookEventV2 emits it: the subject is an EmittedContact and `field_policy`
 * is always sent. A refinement of WebhookEventV2, never served (see contact.ts for why the served
 * schema stays as the contract states it).
 */
export const EmittedWebhookEventV2 = Type.Object(
  {
    ...WebhookEventV2.properties,
    subject: EmittedContact,
    field_policy: FieldPolicy,
  },
  { additionalProperties: false },
)

export type EmittedWebhookEventV2 = Static<typeof EmittedWebhookEventV2>
