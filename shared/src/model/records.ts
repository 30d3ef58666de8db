/**
 * Stored records: what the ports persist. These are internal shapes, not wire types; the wire
 * types live in `shared/src/contract` (TypeBox). Timestamps are ISO-8601 strings in UTC.
 */

/*
 * The closed value lists: each is defined once here, as a `const` array, and its type is read
 * from it. The contract's TypeBox schemas (shared/src/contract) build their enums from these
 * arrays (contract may import model; model imports nothing), so a value added here is a value
 * the published schema accepts, and the order here is the order the served document lists.
 */

/** Release tiers (contract 1): 1 `custom_fields`, 2 `contact_handles`, 3 `sensitive_traits`. */
export const TIERS = [1, 2, 3] as const
export type Tier = (typeof TIERS)[number]

export const CONNECTION_TYPES = ['api', 'webhook', 'partnercrm'] as const
export type ConnectionType = (typeof CONNECTION_TYPES)[number]

export const ALL_SCOPES = ['contacts:write', 'contacts:links:write', 'contacts:read'] as const
export type Scope = (typeof ALL_SCOPES)[number]

/** The thirteen-value custom field type vocabulary (contract 2.1, CustomField.type). */
export const CUSTOM_FIELD_TYPES = [
  'boolean',
  'date',
  'email',
  'file',
  'large_text',
  'multi_select',
  'number',
  'phone',
  'select',
  'signature',
  'text',
  'textbox_list',
  'url',
] as const
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number]

export interface AccountRecord {
  id: string // uuid
  public_id: string // DNS label, first label of the edge host
  name: string | null
  active: boolean
  api_access: boolean
  permitted_tiers: Tier[]
  /** Hosts (lower-case, no trailing dot) that authorize themselves and their subdomains. */
  authorized_domains: string[]
  /**
   * Origins (`https://host[:port]`, lower-case, no path) that may frame the portal's screens for
   * this account (issue 22, job 9; docs/portal.md, "Embedding"). Absent (older records) or empty:
   * no framing at all.
   */
  portal_frame_ancestors?: string[]
  /** The tenant's light branding of its portal screens (issue 22, job 9); absent: the defaults. */
  portal_branding?: PortalBranding
  /**
   * The logo's reference (the bytes are in the BrandAssets store; domain/tenants/logo.ts); absent
   * or null: no logo. A field of its own, not part of portal_branding: the branding form and the
   * upload each write only their own field, so two saves at once never put back a logo whose
   * bytes were just replaced.
   */
  portal_logo?: LogoRef | null
  /**
   * Where the account hears of an endpoint that starts failing, is disabled or recovers, outside
   * the portal (Settings, "Alerts"; domain/tenants/alerts.ts). Absent (older records): none.
   */
  alerts?: AlertSettings
  created_at: string
  updated_at: string
}

/**
 * An account's endpoint alerts (domain/alerts/): an email address and a second webhook URL, each
 * optional. The alert webhook has a signing secret of its own (shown once when the URL is set),
 * so a receiver of alerts never holds the secret of the endpoints it hears about.
 */
export interface AlertSettings {
  /** the address that gets one email per change of an endpoint's state; null: none */
  email: string | null
  /** the URL that gets one signed POST per change; null: none */
  webhook: { url: string; signing_secret: string; created_at: string } | null
}

/**
 * Set on the portal's Settings screen (domain/tenants/branding.ts checks it): a display name for
 * the header and titles, and an accent colour (`#rrggbb`, lower-case) whose contrast was checked
 * against both colour schemes when it was saved. null: not set.
 */
export interface PortalBranding {
  display_name: string | null
  accent: string | null
}

/** A stored logo (domain/tenants/logo.ts): what the header needs, never the bytes. */
export interface LogoRef {
  /** hex SHA-256 of the bytes: the BrandAssets id and the last segment of its URL */
  id: string
  /** sniffed from the bytes when it was uploaded */
  content_type: 'image/png' | 'image/jpeg' | 'image/webp'
  /** bytes */
  size: number
}

export interface FieldMapping {
  from: string
  /** `email` | `first_name` | `last_name` | `company` | `title` | `external_id` | `custom_fields.<key>` */
  to: string
}

/** A token or key hash with an optional end of validity (rotation grace, revocation). */
export interface HashedSecret {
  hash: string
  /** null: valid until replaced; otherwise valid strictly before this instant. */
  expires_at: string | null
}

export interface ConnectionRecord {
  id: string // for a webhook connection, the {sourceId} of its URL
  account_id: string
  type: ConnectionType
  source: string // slug, the `source` of the (source, external_id) anchor
  name: string | null
  active: boolean
  field_mappings: FieldMapping[]
  /** webhook type: the source token hashes (current, plus the previous one during a rotation grace). */
  token_hashes: HashedSecret[]
  /**
   * partnercrm type: this connection is cut over to the tokenized URL, so a call without a token
   * answers 401 even before PARTNERCRM_TOKEN_CUTOVER (absent: false)
   */
  require_token?: boolean
  created_at: string
  updated_at: string
}

export interface ApiKeyRecord {
  id: string
  account_id: string
  connection_id: string
  /** keyed hash (HMAC-SHA256 with the key pepper) of the whole key; the key itself is never stored. */
  hash: string
  /** first characters of the key, for display (`lsk_ab12…`) */
  prefix: string
  scopes: Scope[]
  name: string | null
  expires_at: string | null
  /** when set, the key answers 401 from this instant on (revocation or end of rotation grace). */
  revoked_at: string | null
  created_at: string
}

export interface LocationRecord {
  account_id: string
  connection_id: string
  location_id: string
  token_hashes: HashedSecret[]
  active: boolean
  created_at: string
  updated_at: string
}

export interface CustomFieldDefinition {
  account_id: string
  key: string
  label: string
  type: CustomFieldType
  created_at: string
}

export interface SigningSecret {
  /** `whsec_<base64>` (Standard Webhooks) */
  secret: string
  created_at: string
  /** null: current; otherwise still signed with until this instant (rotation). */
  expires_at: string | null
}

export interface IntegrationRecord {
  id: string
  account_id: string
  url: string
  payload_version: 1 | 2
  tiers: { contact_handles: boolean; sensitive_traits: boolean }
  active: boolean
  /** why the integration was disabled by the platform (for example `endpoint answered 410`) */
  disabled_reason: string | null
  signing_secrets: SigningSecret[]
  /** the tenant's own label (at most 100 characters); absent on integrations created before it existed */
  name?: string | null
  /** the tenant's note on what the endpoint is for (at most 500 characters) */
  description?: string | null
  /**
   * set while the endpoint's newest deliveries keep failing (domain/operations/endpoint-failing.ts):
   * when the streak began and the highest step of the failure threshold it reached (50, 70, 90,
   * 100 %); written only when a step is crossed and cleared by the next success, so the portal's
   * banner reads it from the cached integration list
   */
  failing?: { since: string; percent: number } | null
  /**
   * the task queue its deliveries go on, recorded at the first delivery so it stays the same
   * (domain/webhooks/queue-pool.ts): its own queue, or a shared `webhook-pool-NN` one past
   * TASK_QUEUE_DEDICATED_LIMIT or the Cloud Tasks queue quota; absent until then
   */
  delivery_queue?: string
  /** deliveries per second to this endpoint, set by an operator; absent: WEBHOOK_ENDPOINT_RATE */
  delivery_rate?: number
  created_at: string
  updated_at: string
}

type DeliveryStatus = 'pending' | 'retrying' | 'succeeded' | 'failed'

export interface DeliveryAttempt {
  attempt: number
  at: string
  status_code: number | null
  error: string | null
  latency_ms: number
  /** at most the first 1 KiB of the response body, as text */
  response_excerpt: string | null
  /**
   * a bounded, redacted subset of the response headers (adapters/outbound-http/response-headers.ts):
   * at most 20, names lower-case, values cut to 256 bytes, credential-like values replaced; absent
   * on attempts recorded before it was kept, null when no answer arrived
   */
  response_headers?: Record<string, string> | null
}

export interface DeliveryRecord {
  id: string
  account_id: string
  integration_id: string
  /** the visit-event id, equal to the body `id` and the idempotency key */
  event_id: string
  status: DeliveryStatus
  attempts: DeliveryAttempt[]
  /** the exact body bytes delivered (kept for replay), UTF-8 */
  body: string
  next_attempt_at: string | null
  created_at: string
  updated_at: string
  /**
   * the trace of the visit that made the delivery (Cloud Trace id, 32 hex): its tasks and attempts
   * continue it (docs/operations.md, "Traces"); absent on records from before traces, null without one
   */
  trace_id?: string | null
}

export interface LinkTokenRecord {
  /** SHA-256 (hex) of the opaque token */
  hash: string
  account_id: string
  contact_id: string
  created_at: string
}

// ---- contacts -----------------------------------------------------------------------------

/**
 * Writer classes (contract 2.1, `provenance.name_source`), listed in the contract's order;
 * precedence is form > manual > enrichment > provider (domain/contacts/merge.ts ranks them).
 */
export const NAME_SOURCES = ['enrichment', 'form', 'manual', 'provider'] as const
export type WriterClass = (typeof NAME_SOURCES)[number]
/** The class of the writer that last set the name columns; null ranks as provider. */
export type NameSource = WriterClass | null

export const SUBJECT_TYPES = ['company_profile', 'contact', 'person_profile'] as const
type SubjectType = (typeof SUBJECT_TYPES)[number]

export const CUSTOM_FIELD_SOURCES = ['ai_enrichment', 'inbound_mapping', 'manual'] as const
type CustomFieldSource = (typeof CUSTOM_FIELD_SOURCES)[number]

export const TRAIT_GROUPS = ['demographics', 'financial', 'household'] as const
type TraitGroup = (typeof TRAIT_GROUPS)[number]

interface EmailHandleRecord {
  value: string | null
  kind: string | null
  verified: boolean | null
}

interface PhoneHandleRecord {
  value: string | null
  kind: string | null
  dnc: boolean | null
  dnc_known: boolean
}

export interface TraitRecord {
  key: string | null
  label: string | null
  value: string | null
  group: TraitGroup
}

export interface StoredCustomField {
  value: unknown
  source: CustomFieldSource
  enriched_at: string | null
}

interface IdentityFields {
  first_name?: string | null
  last_name?: string | null
  full_name?: string | null
  title?: string | null
  seniority?: string | null
  network_url?: string | null
}

interface CompanyFields {
  name?: string | null
  domain?: string | null
  website?: string | null
  industry?: string | null
  employee_count?: string | null
  est_revenue?: string | null
  network_url?: string | null
}

interface LocationFields {
  city?: string | null
  state?: string | null
  postal_code?: string | null
}

export interface ContactRecord {
  id: string // uuid, = contactIdFor(account_id, source, external_id); also the document id
  account_id: string
  source: string
  external_id: string
  subject_type: SubjectType
  identity: IdentityFields
  company: CompanyFields
  location: LocationFields
  business_email: string | null // lower-cased
  emails: EmailHandleRecord[]
  phones: PhoneHandleRecord[]
  traits: TraitRecord[]
  custom_fields: Record<string, StoredCustomField>
  name_source: NameSource
  resolved_by: string | null // insert-only
  first_seen_at: string
  last_seen_at: string
  updated_at: string
  /**
   * Per-field write versions used by the merge so that redelivery and reordering converge
   * (`field path` -> `<event time ISO>|<writer rank>|<message id>`). Owned by the merge function.
   */
  versions: Record<string, string>
}

/** What one upsert wants to write. Produced by field mapping (inbound) or by the visit pipeline. */
export interface ContactPatch {
  subject_type?: SubjectType
  identity?: IdentityFields
  company?: CompanyFields
  location?: LocationFields
  business_email?: string | null
  emails?: EmailHandleRecord[]
  phones?: PhoneHandleRecord[]
  traits?: TraitRecord[]
  custom_fields?: Record<string, StoredCustomField>
}

export interface ContactUpsertInput {
  source: string
  external_id: string
  writer: WriterClass
  /** event time of the write (batch receipt time or visit time), ISO; never the wall clock of the worker */
  at: string
  /** a stable id of the originating message + record index, so duplicates are recognised */
  origin: string
  resolved_by?: string | null
  patch: ContactPatch
}
