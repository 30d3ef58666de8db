import { Type, type Static } from 'typebox'
import { IntegerEnum, Nullable, StringEnum, Uuid } from './common.ts'
import { ALL_SCOPES, CONNECTION_TYPES, CUSTOM_FIELD_TYPES, TIERS } from '../model/records.ts'

/**
 * Wire schemas of the management API (management-api.md; docs/management-api.md). Request
 * bodies refuse unknown members (`additionalProperties: false`), so a typo answers 400 with
 * `issues` instead of being silently ignored. Secrets (API key, source token, location token,
 * signing secret) appear only in the responses of the operation that creates or rotates them.
 */

// ---- building blocks ------------------------------------------------------------------------

/** A DNS label (first label of the edge host); stored lower-case, compared case-insensitively. */
export const PUBLIC_ID_PATTERN = '^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$'
export const SOURCE_SLUG_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$'
export const CUSTOM_FIELD_KEY_PATTERN = '^[a-z][a-z0-9_]{0,63}$'
const MAPPING_TARGETS = ['email', 'first_name', 'last_name', 'company', 'title', 'external_id'] as const
/** one of MAPPING_TARGETS or `custom_fields.<key>` */
export const MAPPING_TARGET_PATTERN = `^(${MAPPING_TARGETS.join('|')}|custom_fields\\.[a-z][a-z0-9_]{0,63})$`
/** longest accepted rotation grace / revocation delay: 30 days */
export const MAX_GRACE_SECONDS = 2_592_000
export const DEFAULT_ROTATION_GRACE_SECONDS = 86_400
const MAX_AUTHORIZED_DOMAINS = 100
/** at most this many origins may frame an account's portal (a CSP header stays short) */
const MAX_PORTAL_FRAME_ANCESTORS = 10
/**
 * An https origin: lower-case host name (DNS labels), optional port, nothing after it — no path,
 * no wildcard, no user info. The domain (frame-ancestors.ts) re-checks it through `URL`.
 */
const FRAME_ANCESTOR_PATTERN = '^https://[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:[0-9]{1,5})?$'
const MAX_FIELD_MAPPINGS = 200

const Id = Type.String({ minLength: 1, maxLength: 128 })
/** an account id is a UUID (the others are prefixed ids, `src_…`, `key_…`, `int_…`, which keep their case) */
const AccountId = Uuid()
const Timestamp = Type.String({ format: 'date-time' })
const Name = Type.String({ minLength: 1, maxLength: 200 })
const TierValue = IntegerEnum(TIERS)
const PermittedTiers = Type.Array(TierValue, {
  minItems: 1,
  maxItems: 3,
  uniqueItems: true,
  description: 'tiers the tenant may enable; tier 1 (custom fields) is always present and must be listed',
})
const ScopeValue = StringEnum(ALL_SCOPES)

const FieldMapping = Type.Object(
  {
    from: Type.String({ minLength: 1, maxLength: 128, description: 'inbound record key, matched case-insensitively after normalization' }),
    to: Type.String({
      pattern: MAPPING_TARGET_PATTERN,
      description: '`email`, `first_name`, `last_name`, `company`, `title`, `external_id` or `custom_fields.<key>` of a defined custom field',
    }),
  },
  { title: 'FieldMapping', additionalProperties: false },
)
const FieldMappings = Type.Array(FieldMapping, { maxItems: MAX_FIELD_MAPPINGS })

const IntegrationTiers = Type.Object(
  {
    contact_handles: Type.Boolean({ description: 'tier 2: `handles.emails[]`, `handles.phones[]`' }),
    sensitive_traits: Type.Boolean({ description: 'tier 3: `traits[]`' }),
  },
  { title: 'IntegrationTiers', additionalProperties: false },
)

// ---- path parameters ------------------------------------------------------------------------

export const AccountParams = Type.Object({ accountId: AccountId })
export const ConnectionParams = Type.Object({ accountId: AccountId, connectionId: Id })
export const KeyParams = Type.Object({ accountId: AccountId, connectionId: Id, keyId: Id })
export const LocationParams = Type.Object({ accountId: AccountId, connectionId: Id, locationId: Type.String({ minLength: 1, maxLength: 256 }) })
export const IntegrationParams = Type.Object({ accountId: AccountId, integrationId: Id })

// ---- accounts -------------------------------------------------------------------------------

export const CreateAccountBody = Type.Object(
  {
    public_id: Type.String({ pattern: PUBLIC_ID_PATTERN, description: 'DNS label, the first host label of the edge host; stored lower-case' }),
    name: Type.Optional(Name),
    api_access: Type.Optional(Type.Boolean({ default: true, description: 'plan feature: API keys may be used' })),
    permitted_tiers: Type.Optional(PermittedTiers),
  },
  { title: 'CreateAccountBody', additionalProperties: false },
)

export const UpdateAccountBody = Type.Object(
  {
    active: Type.Optional(Type.Boolean({ description: 'an inactive account answers 404 on its edge host and 401 to its keys' })),
    api_access: Type.Optional(Type.Boolean()),
    permitted_tiers: Type.Optional(PermittedTiers),
    name: Type.Optional(Nullable(Name)),
    portal_frame_ancestors: Type.Optional(
      Type.Array(Type.String({ pattern: FRAME_ANCESTOR_PATTERN, maxLength: 260 }), {
        maxItems: MAX_PORTAL_FRAME_ANCESTORS,
        uniqueItems: true,
        description:
          "https origins (`https://host[:port]`, lower-case, no path, no wildcard) that may embed this account's portal in an iframe; replaces the list; `[]` forbids framing (the default)",
      }),
    ),
  },
  { title: 'UpdateAccountBody', additionalProperties: false },
)

export const Account = Type.Object(
  {
    id: Uuid(),
    public_id: Type.String(),
    name: Nullable(Type.String()),
    active: Type.Boolean(),
    api_access: Type.Boolean(),
    permitted_tiers: Type.Array(TierValue),
    authorized_domains: Type.Array(Type.String()),
    portal_frame_ancestors: Type.Array(Type.String(), { description: "origins that may embed this account's portal (empty: none)" }),
    edge_base_url: Type.String({ description: "the account's edge origin (`{edge_base_url}`)" }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'ManagedAccount', additionalProperties: false },
)

// ---- connections ----------------------------------------------------------------------------

export const CreateConnectionBody = Type.Object(
  {
    type: StringEnum(CONNECTION_TYPES),
    source: Type.Optional(
      Type.String({
        pattern: SOURCE_SLUG_PATTERN,
        description: 'the `source` of the (source, external_id) anchor; default: the type; always `partnercrm` for that type',
      }),
    ),
    name: Type.Optional(Name),
    field_mappings: Type.Optional(FieldMappings),
  },
  { title: 'CreateConnectionBody', additionalProperties: false },
)

export const UpdateConnectionBody = Type.Object(
  {
    active: Type.Optional(Type.Boolean()),
    field_mappings: Type.Optional(FieldMappings),
    name: Type.Optional(Nullable(Name)),
    require_token: Type.Optional(
      Type.Boolean({
        description:
          'type `partnercrm` only: true cuts this connection over to the tokenized URL (a call without a token answers 401 from now on, before PARTNERCRM_TOKEN_CUTOVER); false accepts token-less calls again until that date',
      }),
    ),
  },
  { title: 'UpdateConnectionBody', additionalProperties: false },
)

const connectionProperties = {
  id: Type.String({ description: 'for a webhook connection, the `{sourceId}` of its URL' }),
  type: StringEnum(CONNECTION_TYPES),
  source: Type.String(),
  name: Nullable(Type.String()),
  active: Type.Boolean(),
  field_mappings: Type.Array(FieldMapping),
  webhook_url: Type.Optional(Type.String({ format: 'uri', description: 'type `webhook`: where the source posts' })),
  require_token: Type.Optional(Type.Boolean({ description: 'type `partnercrm`: whether calls without a token are refused (401) for this connection' })),
  created_at: Timestamp,
  updated_at: Timestamp,
}

export const Connection = Type.Object(connectionProperties, { title: 'ManagedConnection', additionalProperties: false })

/** The creation response: a webhook connection's token is shown here once. */
export const CreatedConnection = Type.Object(
  {
    ...connectionProperties,
    token: Type.Optional(Type.String({ description: 'type `webhook`: the source token (`lst_…`), shown once' })),
  },
  { title: 'CreatedConnection', additionalProperties: false },
)

// ---- API keys -------------------------------------------------------------------------------

export const CreateKeyBody = Type.Object(
  {
    scopes: Type.Optional(Type.Array(ScopeValue, { minItems: 1, uniqueItems: true, default: ['contacts:write'] })),
    name: Type.Optional(Name),
    expires_at: Type.Optional(Nullable(Timestamp, 'the key answers 401 from this instant on; must lie in the future')),
  },
  { title: 'CreateKeyBody', additionalProperties: false },
)

export const RotateBody = Type.Object(
  {
    grace_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_GRACE_SECONDS,
        default: DEFAULT_ROTATION_GRACE_SECONDS,
        description: 'how long the previous key or token keeps working',
      }),
    ),
  },
  { title: 'RotateBody', additionalProperties: false },
)

export const RevokeKeyQuery = Type.Object({
  grace_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_GRACE_SECONDS, default: 0, description: 'the key keeps working this long' })),
})

const keyProperties = {
  id: Type.String(),
  prefix: Type.String({ description: 'the first characters of the key, for recognising it' }),
  name: Nullable(Type.String()),
  scopes: Type.Array(ScopeValue),
  expires_at: Nullable(Timestamp),
  revoked_at: Nullable(Timestamp, 'the key answers 401 from this instant on (revocation or end of a rotation grace)'),
  created_at: Timestamp,
}

export const ApiKey = Type.Object(keyProperties, { title: 'ManagedApiKey', additionalProperties: false })

export const CreatedApiKey = Type.Object(
  { ...keyProperties, key: Type.String({ description: 'the API key (`lsk_…`), shown once; only its keyed hash is stored' }) },
  { title: 'CreatedApiKey', additionalProperties: false },
)

export const RotatedApiKey = Type.Object(
  {
    ...keyProperties,
    key: Type.String({ description: 'the new API key, shown once' }),
    previous: Type.Object(
      { id: Type.String(), revoked_at: Timestamp },
      { additionalProperties: false, description: 'the rotated key and the end of its grace' },
    ),
  },
  { title: 'RotatedApiKey', additionalProperties: false },
)

// ---- source token ---------------------------------------------------------------------------

export const RotatedToken = Type.Object(
  {
    token: Type.String({ description: 'the new source token (`lst_…`), shown once' }),
    webhook_url: Type.String({ format: 'uri' }),
    previous_expires_at: Nullable(Timestamp, 'the previous token works until this instant; null when there was none'),
  },
  { title: 'RotatedSourceToken', additionalProperties: false },
)

// ---- partner CRM locations ------------------------------------------------------------------

export const AddLocationBody = Type.Object(
  {
    location_id: Type.String({
      minLength: 1,
      maxLength: 256,
      pattern: '^[\\x21-\\x7e]+$',
      description: 'the partner CRM location id (printable ASCII, no spaces)',
    }),
  },
  { title: 'AddLocationBody', additionalProperties: false },
)

export const CreatedLocation = Type.Object(
  {
    location_id: Type.String(),
    token: Type.String({ description: 'the location token (`lst_…`), shown once' }),
    webhook_url: Type.String({ format: 'uri', description: "the partner CRM webhook of the account's edge host" }),
    active: Type.Boolean(),
    created_at: Timestamp,
  },
  { title: 'CreatedLocation', additionalProperties: false },
)

export const RotatedLocationToken = Type.Object(
  {
    location_id: Type.String(),
    token: Type.String({ description: 'the new location token (`lst_…`), shown once' }),
    webhook_url: Type.String({ format: 'uri' }),
    previous_expires_at: Nullable(Timestamp, 'the previous token works until this instant; null when there was none'),
  },
  { title: 'RotatedLocationToken', additionalProperties: false },
)

// ---- authorized domains ---------------------------------------------------------------------

export const AuthorizedDomainsBody = Type.Object(
  {
    domains: Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
      maxItems: MAX_AUTHORIZED_DOMAINS,
      description: 'replaces the list; each domain authorizes itself and its subdomains',
    }),
  },
  { title: 'AuthorizedDomainsBody', additionalProperties: false },
)

export const AuthorizedDomains = Type.Object(
  { domains: Type.Array(Type.String(), { description: 'normalized: lower-case, IDN as punycode, no trailing dot, no duplicates' }) },
  { title: 'AuthorizedDomains', additionalProperties: false },
)

// ---- custom fields --------------------------------------------------------------------------

export const CreateCustomFieldBody = Type.Object(
  {
    key: Type.String({ pattern: CUSTOM_FIELD_KEY_PATTERN, description: 'the key in `custom_fields` and in `custom_fields.<key>` mappings' }),
    label: Name,
    type: StringEnum(CUSTOM_FIELD_TYPES),
  },
  { title: 'CreateCustomFieldBody', additionalProperties: false },
)

export const CustomField = Type.Object(
  {
    key: Type.String(),
    label: Type.String(),
    type: Type.String(),
    created_at: Timestamp,
  },
  { title: 'CustomFieldDefinition', additionalProperties: false },
)

export const CustomFieldList = Type.Object({ data: Type.Array(CustomField) }, { title: 'CustomFieldDefinitionList', additionalProperties: false })

// ---- integrations ---------------------------------------------------------------------------

const IntegrationUrl = Type.String({ minLength: 1, maxLength: 2048, description: 'absolute https (or http) URL of a public host' })
const PayloadVersion = IntegerEnum([1, 2] as const, { description: 'only 2 is the contract body (`visitor.identified` v2)' })
/** the tenant's own words for an endpoint (issue 22 job 5); `null` on an update clears them */
export const INTEGRATION_NAME_MAX = 100
export const INTEGRATION_DESCRIPTION_MAX = 500
const IntegrationName = Type.String({ minLength: 1, maxLength: INTEGRATION_NAME_MAX, description: 'a label for the endpoint, shown in the portal' })
const IntegrationDescription = Type.String({ minLength: 1, maxLength: INTEGRATION_DESCRIPTION_MAX, description: 'what the endpoint is for' })

export const CreateIntegrationBody = Type.Object(
  {
    url: IntegrationUrl,
    payload_version: PayloadVersion,
    name: Type.Optional(IntegrationName),
    description: Type.Optional(IntegrationDescription),
    tiers: Type.Optional(
      Type.Object(
        { contact_handles: Type.Optional(Type.Boolean({ default: false })), sensitive_traits: Type.Optional(Type.Boolean({ default: false })) },
        { additionalProperties: false },
      ),
    ),
  },
  { title: 'CreateIntegrationBody', additionalProperties: false },
)

export const UpdateIntegrationBody = Type.Object(
  {
    url: Type.Optional(IntegrationUrl),
    payload_version: Type.Optional(PayloadVersion),
    name: Type.Optional(Type.Union([IntegrationName, Type.Null()], { description: 'a label for the endpoint; null removes it' })),
    description: Type.Optional(Type.Union([IntegrationDescription, Type.Null()], { description: 'what the endpoint is for; null removes it' })),
    tiers: Type.Optional(
      Type.Object(
        { contact_handles: Type.Optional(Type.Boolean()), sensitive_traits: Type.Optional(Type.Boolean()) },
        { additionalProperties: false, description: 'members given replace the current values; others are kept' },
      ),
    ),
    active: Type.Optional(Type.Boolean({ description: 'true re-enables an integration the platform disabled' })),
  },
  { title: 'UpdateIntegrationBody', additionalProperties: false },
)

const integrationProperties = {
  id: Type.String(),
  url: Type.String(),
  payload_version: PayloadVersion,
  tiers: IntegrationTiers,
  active: Type.Boolean(),
  disabled_reason: Nullable(Type.String(), 'why the platform disabled the integration'),
  name: Nullable(Type.String(), "the tenant's label for the endpoint"),
  description: Nullable(Type.String(), 'what the endpoint is for'),
  failing: Nullable(
    Type.Object(
      {
        since: Timestamp,
        percent: Type.Integer({ description: 'the highest step of the failure threshold reached: 50, 70, 90 or 100' }),
      },
      { additionalProperties: false },
    ),
    "set while the endpoint's newest deliveries keep failing (docs/operations.md, endpoint.failing)",
  ),
  created_at: Timestamp,
  updated_at: Timestamp,
}

export const Integration = Type.Object(integrationProperties, { title: 'ManagedIntegration', additionalProperties: false })

export const CreatedIntegration = Type.Object(
  { ...integrationProperties, signing_secret: Type.String({ description: 'Standard Webhooks secret (`whsec_…`), shown once' }) },
  { title: 'CreatedIntegration', additionalProperties: false },
)

export const IntegrationList = Type.Object({ data: Type.Array(Integration) }, { title: 'ManagedIntegrationList', additionalProperties: false })

export const ConnectionList = Type.Object({ data: Type.Array(Connection) }, { title: 'ManagedConnectionList', additionalProperties: false })

export type CreateAccountBody = Static<typeof CreateAccountBody>
export type UpdateAccountBody = Static<typeof UpdateAccountBody>
export type AccountView = Static<typeof Account>
export type CreateConnectionBody = Static<typeof CreateConnectionBody>
export type UpdateConnectionBody = Static<typeof UpdateConnectionBody>
export type ConnectionView = Static<typeof Connection>
export type CreatedConnection = Static<typeof CreatedConnection>
export type CreateKeyBody = Static<typeof CreateKeyBody>
export type RotateBody = Static<typeof RotateBody>
export type ApiKeyView = Static<typeof ApiKey>
export type CreatedApiKey = Static<typeof CreatedApiKey>
export type RotatedApiKey = Static<typeof RotatedApiKey>
export type RotatedToken = Static<typeof RotatedToken>
export type CreatedLocation = Static<typeof CreatedLocation>
export type RotatedLocationToken = Static<typeof RotatedLocationToken>
export type CreateCustomFieldBody = Static<typeof CreateCustomFieldBody>
export type CustomFieldView = Static<typeof CustomField>
export type CreateIntegrationBody = Static<typeof CreateIntegrationBody>
export type UpdateIntegrationBody = Static<typeof UpdateIntegrationBody>
export type IntegrationView = Static<typeof Integration>
export type CreatedIntegration = Static<typeof CreatedIntegration>

export const AccountList = Type.Object(
  {
    data: Type.Array(Account),
    next_after: Nullable(Type.String(), 'pass as `after` for the next page; null on the last page'),
  },
  { title: 'ManagedAccountList', additionalProperties: false },
)
