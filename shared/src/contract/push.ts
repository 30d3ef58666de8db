import { Type, type Static } from 'typebox'
import { NullableString } from './common.ts'

/** The inbound push operations (contract 4.3–4.5) and their 202 answer. */

export const MAX_CONTACTS_PER_PUSH = 10_000
const MAX_PUSH_BODY_BYTES = 8_388_608

/** One inbound contact record (contract 2.5): arbitrary keys, any JSON values. */
const InboundContactRecord = Type.Object(
  {},
  {
    title: 'InboundContactRecord',
    additionalProperties: true,
    description: "arbitrary keys, matched against the connection's field mappings; unmapped keys are dropped, null values ignored",
  },
)

const pushBodyDescription = `at most ${MAX_CONTACTS_PER_PUSH} records (more answers 413 \`too many contacts\`); body at most ${MAX_PUSH_BODY_BYTES} bytes (413 \`payload too large\`)`

/**
 * The published shape with the contract's `maxItems` (documentation only; never route validation:
 * more than 10000 records answer 413 `too many contacts`, which the handler decides, not a 400).
 */
export const ContactsPushBodyDocumented = Type.Object(
  {
    contacts: Type.Array(InboundContactRecord, { minItems: 1, maxItems: MAX_CONTACTS_PER_PUSH, description: pushBodyDescription }),
  },
  { title: 'ContactsPushBody' },
)

/** 202: the batch is durably queued, not yet upserted. */
export const PushAccepted = Type.Object(
  {
    ok: Type.Literal(true),
    accepted: Type.Integer({ minimum: 0, description: 'records accepted into the batch' }),
    queued: Type.Literal(true),
  },
  { title: 'PushAccepted', additionalProperties: false },
)

/**
 * The deprecated nested shape, accepted only by the origin fallbacks (contract 4.6 rule 5): each
 * `resolution` object is one inbound contact record (documentation only; checked by hand).
 */
const EventsPushBody = Type.Object(
  {
    events: Type.Array(Type.Object({ resolution: InboundContactRecord }, { additionalProperties: true }), {
      minItems: 1,
      maxItems: MAX_CONTACTS_PER_PUSH,
      description: 'each `resolution` is one inbound contact record',
    }),
  },
  { title: 'EventsPushBody', description: 'deprecated nested shape; origin fallbacks only' },
)

/** What the origin fallbacks accept: the push body, or the deprecated nested shape. */
export const FallbackPushBody = Type.Union([ContactsPushBodyDocumented, EventsPushBody], { title: 'FallbackPushBody' })

/**
 * 200 of an origin fallback when the durable queue is unavailable (contract 4.6 rule 3): the
 * batch was upserted synchronously instead (docs/ingestion.md).
 */
export const PushUpsertedSync = Type.Object(
  {
    ok: Type.Literal(true),
    accepted: Type.Integer({ minimum: 0, description: 'records accepted into the batch (those with an idempotency anchor)' }),
    queued: Type.Literal(false),
    upserted: Type.Integer({ minimum: 0, description: 'accepted records written (or already up to date)' }),
    failed: Type.Integer({ minimum: 0, description: 'accepted records that could not be stored' }),
  },
  { title: 'PushUpsertedSync', additionalProperties: false },
)

/** The partner CRM's native contact webhook body (contract 4.5): every member optional. */
export const PartnerCrmContactBody = Type.Object(
  {
    contactId: Type.Optional(Type.String({ description: 'becomes `external_id` with `source` = `partnercrm`' })),
    contact_id: Type.Optional(Type.String()),
    id: Type.Optional(Type.String({ description: 'used as `external_id` when `contactId` and `contact_id` are absent' })),
    locationId: Type.Optional(Type.String({ description: 'must be an active location of this account' })),
    location_id: Type.Optional(Type.String()),
    email: Type.Optional(NullableString()),
    firstName: Type.Optional(NullableString()),
    first_name: Type.Optional(NullableString()),
    lastName: Type.Optional(NullableString()),
    last_name: Type.Optional(NullableString()),
    company: Type.Optional(NullableString()),
    companyName: Type.Optional(NullableString()),
    title: Type.Optional(NullableString()),
  },
  { title: 'PartnerCrmContactBody', additionalProperties: true },
)

export type PushAccepted = Static<typeof PushAccepted>
export type PartnerCrmContactBody = Static<typeof PartnerCrmContactBody>
export type PushUpsertedSync = Static<typeof PushUpsertedSync>
