import { Type, type Static } from 'typebox'
import { ContractVersionLiteral, MissingReasonSchema, NullableBoolean, NullableString, StringEnum, type MissingReason } from './common.ts'
import { CUSTOM_FIELD_SOURCES, CUSTOM_FIELD_TYPES, NAME_SOURCES, SUBJECT_TYPES, TRAIT_GROUPS } from '../model/records.ts'

/**
 * The shared Contact object (contract 2.1): the subject of `visitor.identified`, verbatim, and
 * the single-resource body of the read contract.
 *
 * Two schemas describe this one wire shape, on purpose:
 *
 * - `Contact` (and ContactIdentity … ContactLinks) is the contract's Contact as the contract
 *   states it: "In the nested objects below every member is optional and, unless stated, `string`
 *   or `null`", and only Contact, EmailHandle, PhoneHandle, Trait and CustomField are declared
 *   `additionalProperties: false`. These schemas are what `GET /api/v1/schema` serves (contract
 *   4.1: schema-document.ts; committed as shared/generated/contract-2026-09-04.schema.json and
 *   pinned by test/contract/schema-document.test.ts), and the OpenAPI document's components are
 *   copied from that document's `$defs` (scripts/lib/openapi/components.ts), so there is no
 *   separate OpenAPI Contact. The contract is binding to the letter: the served document may not
 *   require a member the contract calls optional, nor close an object it leaves open, so
 *   `handles.emails`, `provenance.first_seen_at`, `links.self` … stay optional there.
 *
 * - `EmittedContact` (below) states what we emit: assembleContact (domain/contacts/assemble.ts)
 *   always sends `handles.emails/phones`, `provenance.first_seen_at/last_seen_at/name_source` and
 *   both `links`, never sends `null` for a member it has no value for (it omits the member),
 *   closes every nested object, and emits only callable phones. It is a refinement of `Contact`
 *   (same members and formats; more of them required, fewer values allowed), so every value it
 *   accepts is a valid contract Contact: test/contract/emitted-contact.test.ts proves the
 *   inclusion on the schemas themselves, and test/outbound/assemble.test.ts checks every
 *   assembled contact against both. The code's types are its Static (`EmittedContact`), so a
 *   reader never needs `contact.handles.phones!`. It is never served; annotations (descriptions)
 *   live on the contract's schemas only.
 */

const opt = Type.Optional

export const ContactIdentity = Type.Object(
  {
    first_name: opt(NullableString({ description: 'given name' })),
    last_name: opt(NullableString({ description: 'family name' })),
    full_name: opt(NullableString({ description: 'joined from first and last name at ingest' })),
    title: opt(NullableString({ description: 'job title at the resolved company' })),
    seniority: opt(NullableString({ description: 'seniority band' })),
    network_url: opt(NullableString({ format: 'uri', description: "person's professional-network profile URL" })),
  },
  { title: 'ContactIdentity' },
)

export const ContactCompany = Type.Object(
  {
    name: opt(NullableString({ description: 'denormalized employer name' })),
    domain: opt(NullableString({ description: 'registrable domain of the employer' })),
    website: opt(NullableString({ format: 'uri', description: 'website URL as delivered' })),
    industry: opt(NullableString({ description: 'industry band from the resolving provider' })),
    employee_count: opt(NullableString({ description: 'employee-count band, as delivered' })),
    est_revenue: opt(NullableString({ description: 'revenue band, as delivered' })),
    network_url: opt(NullableString({ format: 'uri', description: "organization's professional-network page" })),
  },
  { title: 'ContactCompany' },
)

export const ContactLocation = Type.Object(
  {
    city: opt(NullableString()),
    state: opt(NullableString({ description: 'coarse business region' })),
    postal_code: opt(NullableString({ description: 'coarse postal code' })),
  },
  { title: 'ContactLocation', description: 'coarse business location, not the home address (a tier-3 trait)' },
)

export const EmailHandle = Type.Object(
  {
    value: NullableString(),
    kind: NullableString(),
    verified: NullableBoolean(),
  },
  { title: 'EmailHandle', additionalProperties: false },
)

export const PhoneHandle = Type.Object(
  {
    value: NullableString(),
    kind: NullableString(),
    dnc: NullableBoolean(),
    dnc_known: Type.Boolean(),
    callable: Type.Boolean({ description: '`dnc_known` AND NOT `dnc`; a number that is not callable is never emitted' }),
  },
  { title: 'PhoneHandle', additionalProperties: false },
)

export const ContactHandles = Type.Object(
  {
    business_email: opt(NullableString({ format: 'email', description: 'work email, stored case-insensitively' })),
    emails: opt(Type.Array(EmailHandle, { description: 'tier 2; empty when the tier is not enabled' })),
    phones: opt(Type.Array(PhoneHandle, { description: 'tier 2; empty when the tier is not enabled' })),
  },
  { title: 'ContactHandles' },
)

export const Trait = Type.Object(
  {
    key: NullableString(),
    label: NullableString(),
    value: NullableString(),
    group: StringEnum(TRAIT_GROUPS),
  },
  { title: 'Trait', additionalProperties: false },
)

export const CustomField = Type.Object(
  {
    key: Type.String({ description: 'stable slug, unique per tenant' }),
    label: Type.String({ description: 'human-readable name' }),
    type: StringEnum(CUSTOM_FIELD_TYPES),
    value: Type.Any({ description: 'scalar types are stored as text; the four JSON storage types are stored as JSON' }),
    source: StringEnum(CUSTOM_FIELD_SOURCES),
    enriched_at: NullableString({ format: 'date-time', description: 'set only when `source` is `ai_enrichment`' }),
  },
  { title: 'CustomField', additionalProperties: false },
)

/**
 * A map from key to reason. Stated as `additionalProperties` (the served document's form);
 * TypeBox's static type of an object without properties ignores that keyword, hence the type
 * given here, which says the same as the schema.
 */
export const ContactMissing = Type.Unsafe<Record<string, MissingReason>>(
  Type.Object(
    {},
    {
      title: 'ContactMissing',
      description: "keys of the caller's key set K that carry no value, each with one of the five closed reasons",
      additionalProperties: MissingReasonSchema,
    },
  ),
)

export const ContactProvenance = Type.Object(
  {
    first_seen_at: opt(Type.String({ format: 'date-time', description: 'when the person was first resolved for the tenant' })),
    last_seen_at: opt(Type.String({ format: 'date-time', description: 'refreshed on every provider upsert' })),
    name_source: opt(
      Type.Union([StringEnum(NAME_SOURCES), Type.Null()], {
        description: 'class of writer that last set the name columns (form > manual > enrichment > provider; null ranks as provider)',
      }),
    ),
    resolved_by: opt(Type.String({ description: 'insert-only resolution stamp, masked to a tier label' })),
  },
  { title: 'ContactProvenance' },
)

export const ContactLinks = Type.Object(
  {
    portal: opt(NullableString({ format: 'uri', description: 'the portal page for the subject' })),
    self: opt(NullableString({ format: 'uri', description: 'the read-contract URL for the subject' })),
  },
  { title: 'ContactLinks' },
)

export const Contact = Type.Object(
  {
    object: Type.Literal('contact'),
    id: Type.String({ format: 'uuid', description: 'tenant-scoped id of the resolved person record' }),
    subject_type: StringEnum(SUBJECT_TYPES),
    contract_version: ContractVersionLiteral(),
    identity: ContactIdentity,
    company: ContactCompany,
    location: ContactLocation,
    handles: ContactHandles,
    traits: Type.Array(Trait, { description: 'tier 3' }),
    custom_fields: Type.Array(CustomField, { description: 'tier 1, always present' }),
    missing: ContactMissing,
    provenance: ContactProvenance,
    links: ContactLinks,
  },
  { title: 'Contact', additionalProperties: false },
)

export type ContactIdentity = Static<typeof ContactIdentity>
export type ContactCompany = Static<typeof ContactCompany>
export type ContactLocation = Static<typeof ContactLocation>
export type EmailHandle = Static<typeof EmailHandle>
export type PhoneHandle = Static<typeof PhoneHandle>
export type ContactHandles = Static<typeof ContactHandles>
export type Trait = Static<typeof Trait>
export type CustomField = Static<typeof CustomField>
export type ContactMissing = Static<typeof ContactMissing>
export type ContactProvenance = Static<typeof ContactProvenance>
export type ContactLinks = Static<typeof ContactLinks>
export type Contact = Static<typeof Contact>

// ---- what we emit: a refinement of the contract's Contact (see the comment at the top) ----------

const closed = { additionalProperties: false } as const

const EmittedContactIdentity = Type.Object(
  {
    first_name: opt(Type.String()),
    last_name: opt(Type.String()),
    full_name: opt(Type.String()),
    title: opt(Type.String()),
    seniority: opt(Type.String()),
    network_url: opt(Type.String({ format: 'uri' })),
  },
  closed,
)

const EmittedContactCompany = Type.Object(
  {
    name: opt(Type.String()),
    domain: opt(Type.String()),
    website: opt(Type.String({ format: 'uri' })),
    industry: opt(Type.String()),
    employee_count: opt(Type.String()),
    est_revenue: opt(Type.String()),
    network_url: opt(Type.String({ format: 'uri' })),
  },
  closed,
)

const EmittedContactLocation = Type.Object(
  {
    city: opt(Type.String()),
    state: opt(Type.String()),
    postal_code: opt(Type.String()),
  },
  closed,
)

/** a released email always has a value */
const EmittedEmailHandle = Type.Object(
  {
    value: Type.String(),
    kind: NullableString(),
    verified: NullableBoolean(),
  },
  closed,
)

/** only callable numbers are emitted: `dnc_known` true, `dnc` not true, hence `callable` true */
const EmittedPhoneHandle = Type.Object(
  {
    value: Type.String(),
    kind: NullableString(),
    dnc: Type.Union([Type.Literal(false), Type.Null()]),
    dnc_known: Type.Literal(true),
    callable: Type.Literal(true),
  },
  closed,
)

/** both arrays always present, empty when tier 2 is not released */
const EmittedContactHandles = Type.Object(
  {
    business_email: opt(Type.String({ format: 'email' })),
    emails: Type.Array(EmittedEmailHandle),
    phones: Type.Array(EmittedPhoneHandle),
  },
  closed,
)

/** a released trait always has a value */
const EmittedTrait = Type.Object(
  {
    key: NullableString(),
    label: NullableString(),
    value: Type.String(),
    group: StringEnum(TRAIT_GROUPS),
  },
  closed,
)

/** `resolved_by` is omitted until a provider resolved the person */
const EmittedContactProvenance = Type.Object(
  {
    first_seen_at: Type.String({ format: 'date-time' }),
    last_seen_at: Type.String({ format: 'date-time' }),
    name_source: Type.Union([StringEnum(NAME_SOURCES), Type.Null()]),
    resolved_by: opt(Type.String()),
  },
  closed,
)

/** both links are always built from the portal origin */
const EmittedContactLinks = Type.Object(
  {
    portal: Type.String({ format: 'uri' }),
    self: Type.String({ format: 'uri' }),
  },
  closed,
)

export const EmittedContact = Type.Object(
  {
    object: Contact.properties.object,
    id: Contact.properties.id,
    subject_type: Contact.properties.subject_type,
    contract_version: Contact.properties.contract_version,
    identity: EmittedContactIdentity,
    company: EmittedContactCompany,
    location: EmittedContactLocation,
    handles: EmittedContactHandles,
    traits: Type.Array(EmittedTrait),
    custom_fields: Contact.properties.custom_fields,
    missing: ContactMissing,
    provenance: EmittedContactProvenance,
    links: EmittedContactLinks,
  },
  closed,
)

export type EmittedEmailHandle = Static<typeof EmittedEmailHandle>
export type EmittedPhoneHandle = Static<typeof EmittedPhoneHandle>
export type EmittedContactHandles = Static<typeof EmittedContactHandles>
export type EmittedTrait = Static<typeof EmittedTrait>
export type EmittedContactProvenance = Static<typeof EmittedContactProvenance>
export type EmittedContact = Static<typeof EmittedContact>
