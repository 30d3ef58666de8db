import { Type, type Static } from 'typebox'
import { SUBJECT_TYPES, TRAIT_GROUPS } from '../model/records.ts'
import { StringEnum, Uuid } from './common.ts'

/**
 * The members of `resolution` have the shapes of the Contact's own members (contract 2.1,
 * management-api.md): `identity`, `company`, `location` as there, `handles.emails[]` as
 * EmailHandle, `handles.phones[]` as PhoneHandle, `traits[]` as Trait; members the Contact
 * requires are optional here (the provider may not know them). Derived members (`callable`,
 * `identity.full_name`) are accepted and recomputed, never trusted.
 *
 * A visit event: one identified visit, published by the identification pipeline on the
 * `visit-events` topic (attribute `v` = VISIT_EVENT_VERSION) or injected through
 * `POST /api/v1/admin/accounts/{accountId}/visits`. Validated on consume.
 * Exactly one way to name the person: `contact_id`, `lsv` (a minted link token) or
 * `resolution` (provider data for a person matched or created by the dispatcher).
 */
export const VISIT_EVENT_VERSION = '1'

const NullableString = Type.Union([Type.String({ maxLength: 2048 }), Type.Null()])

const VisitDetails = Type.Object(
  {
    captured_url: Type.Optional(NullableString),
    domain_id: Type.Optional(NullableString),
    referrer: Type.Optional(NullableString),
    visitor_id: Type.Optional(NullableString),
    seen_at: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
  },
  { title: 'VisitDetails', additionalProperties: false },
)

const ResolutionEmail = Type.Object(
  { value: NullableString, kind: Type.Optional(NullableString), verified: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])) },
  { additionalProperties: false },
)
/**
 * A PhoneHandle as the Contact carries it (contract 2.1). `callable` is derived (`dnc_known` AND
 * NOT `dnc`): the pipeline may send it, and it is accepted and ignored; the dispatcher recomputes
 * it from `dnc_known` and `dnc` whenever the handle is emitted (management-api.md, visit events).
 */
const ResolutionPhone = Type.Object(
  {
    value: NullableString,
    kind: Type.Optional(NullableString),
    dnc: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    dnc_known: Type.Optional(Type.Boolean()),
    callable: Type.Optional(Type.Boolean({ description: 'derived; accepted and recomputed, never trusted' })),
  },
  { additionalProperties: false },
)
const ResolutionTrait = Type.Object(
  {
    key: NullableString,
    label: Type.Optional(NullableString),
    value: NullableString,
    group: StringEnum(TRAIT_GROUPS),
  },
  { additionalProperties: false },
)

export const VisitResolution = Type.Object(
  {
    subject_type: Type.Optional(StringEnum(SUBJECT_TYPES)),
    identity: Type.Optional(
      Type.Object(
        {
          first_name: Type.Optional(NullableString),
          last_name: Type.Optional(NullableString),
          full_name: Type.Optional(NullableString),
          title: Type.Optional(NullableString),
          seniority: Type.Optional(NullableString),
          network_url: Type.Optional(NullableString),
        },
        { additionalProperties: false },
      ),
    ),
    company: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(NullableString),
          domain: Type.Optional(NullableString),
          website: Type.Optional(NullableString),
          industry: Type.Optional(NullableString),
          employee_count: Type.Optional(NullableString),
          est_revenue: Type.Optional(NullableString),
          network_url: Type.Optional(NullableString),
        },
        { additionalProperties: false },
      ),
    ),
    location: Type.Optional(
      Type.Object(
        {
          city: Type.Optional(NullableString),
          state: Type.Optional(NullableString),
          postal_code: Type.Optional(NullableString),
        },
        { additionalProperties: false },
      ),
    ),
    handles: Type.Optional(
      Type.Object(
        {
          business_email: Type.Optional(NullableString),
          emails: Type.Optional(Type.Array(ResolutionEmail, { maxItems: 50 })),
          phones: Type.Optional(Type.Array(ResolutionPhone, { maxItems: 50 })),
        },
        { additionalProperties: false },
      ),
    ),
    traits: Type.Optional(Type.Array(ResolutionTrait, { maxItems: 200 })),
    resolved_by: Type.String({ minLength: 1, maxLength: 128 }),
  },
  { title: 'VisitResolution', additionalProperties: false },
)

/**
 * A visit id travels as the body `id` and in the `X-Service-Idempotency-Key` header (contract 6),
 * and an HTTP header carries printable ASCII only (a character past U+00FF cannot be sent at all,
 * and one past U+007F is not read back as the body's UTF-8): printable ASCII, inner spaces
 * allowed, none at either end (HTTP trims them). `.` is allowed: `webhook-id` derives a safe form.
 */
const VISIT_ID_PATTERN = '^[!-~]([ -~]*[!-~])?$'

export const VisitEvent = Type.Object(
  {
    id: Type.String({
      minLength: 1,
      maxLength: 256,
      pattern: VISIT_ID_PATTERN,
      description: 'the visit-event id: printable ASCII, no space at either end; the delivered body `id` and `X-Service-Idempotency-Key`',
    }),
    account_id: Type.String({ minLength: 1, maxLength: 128 }),
    emitted_at: Type.Optional(Type.String({ format: 'date-time' })),
    tier: Type.Union([Type.Literal('company'), Type.Literal('person')]),
    visit: Type.Optional(VisitDetails),
    contact_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    lsv: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    resolution: Type.Optional(VisitResolution),
    classification: Type.Optional(Type.String({ maxLength: 256 })),
    served_from: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { title: 'VisitEvent', additionalProperties: false },
)

export type VisitEvent = Static<typeof VisitEvent>
export type VisitResolution = Static<typeof VisitResolution>

/**
 * The body of `POST /api/v1/admin/accounts/{accountId}/visits`: `account_id` comes from the path.
 * When sent it must equal the path's, a UUID lower-cased as the path's is (common.ts, Uuid).
 */
export const VisitEventInput = Type.Object(
  { ...VisitEvent.properties, account_id: Type.Optional(Uuid()) },
  { title: 'VisitEventInput', additionalProperties: false },
)
export type VisitEventInput = Static<typeof VisitEventInput>
