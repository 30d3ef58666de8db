import { Type, type Static } from 'typebox'
import { Nullable, StringEnum } from './common.ts'

/**
 * The platform's own queue and task payloads: what one service hands another through Pub/Sub
 * or Cloud Tasks. Not part of the public contract (never served), but wire shapes all the same:
 * each carries a version (a member or an attribute) and is checked on consume
 * (contract/message-check.ts), so a payload of another version or shape is refused by the
 * consumer's poison-message policy instead of being half-read.
 *
 * Attribute and task members that a consumer does not read are allowed: during a rolling
 * deploy an older consumer can meet a payload of the same version written by newer code.
 */

const NonEmpty = (description?: string) => Type.String({ minLength: 1, ...(description ? { description } : {}) })
const Instant = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) })

// ---- contact-batches (edge -> upsert worker) ----------------------------------------------

export const BATCH_MESSAGE_VERSION = '1'
const BATCH_SHAPES = ['contacts', 'events', 'partnercrm'] as const

/**
 * The attributes of a `contact-batches` message (docs/ingestion.md, "Message format"); its data
 * is the request body exactly as received, read according to `shape`.
 */
export const BatchMessageAttributes = Type.Object(
  {
    v: Type.Literal(BATCH_MESSAGE_VERSION, { description: 'the format version; a consumer refuses any other' }),
    shape: StringEnum(BATCH_SHAPES, { description: 'how to read the body (domain/ingest/push-body.ts)' }),
    account_id: NonEmpty('the tenant'),
    connection_id: NonEmpty('the connection whose field mappings apply'),
    source: NonEmpty('the `source` of the (source, external_id) anchor'),
    received_at: Instant('when the edge accepted the batch: the event time of every write in it'),
    batch_id: NonEmpty('record i is written with origin `<batch_id>:<i>`, so a redelivery is a no-op'),
    location_id: Type.Optional(NonEmpty('partner CRM only: the location the call came for')),
    request_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description:
          "the push's request id: the worker records what it refused on the push's inbound debugger entry (optional: batches queued before it have none)",
      }),
    ),
    indexes: Type.Optional(
      Type.String({
        pattern: '^(0|[1-9][0-9]*)(,(0|[1-9][0-9]*))*$',
        description: 'dead letters only: the original positions of the records the body still holds',
      }),
    ),
  },
  { title: 'BatchMessageAttributes' },
)

// ---- contact-changes (upsert worker -> BigQuery subscription; export) ----------------------

/** 2: TIMESTAMP columns as microseconds since the epoch (1 had ISO-8601 strings) */
export const CHANGE_ROW_VERSION = '2'
const CHANGE_OPS = ['upsert', 'delete'] as const

/** The attributes of a `contact-changes` message; its data is one ChangeRow as JSON. */
export const ChangeRowAttributes = Type.Object(
  {
    v: Type.Literal(CHANGE_ROW_VERSION, { description: 'the row format version' }),
    account_id: NonEmpty(),
    contact_id: NonEmpty(),
  },
  { title: 'ChangeRowAttributes' },
)

const NullableText = Nullable(Type.String())
const NullableInstant = Nullable(Instant())

/**
 * A TIMESTAMP column's value in a streamed row: whole microseconds since the Unix epoch, the
 * TIMESTAMP input of the BigQuery Storage Write API, which the BigQuery subscription writes
 * through (docs/deploy.md, "BigQuery: how rows get in"). At most 2^53 - 1: a JSON number keeps
 * every digit up to there (the year 2255).
 */
const EpochMicros = () =>
  Type.Integer({ title: 'EpochMicros', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'microseconds since 1970-01-01T00:00:00Z' })
const NullableEpochMicros = Nullable(EpochMicros())

/**
 * One contact change as a flat BigQuery row (domain/contacts/change-row.ts), as published to
 * `contact-changes` for the BigQuery subscription: the columns of
 * infra/bigquery/contact_changes.schema.json, in its order. A row goes to a table, so it is
 * exact: no other member, absent values are null, repeated records are arrays.
 */
export const ChangeRow = Type.Object(
  {
    account_id: Type.String(),
    contact_id: Type.String(),
    source: Type.String(),
    external_id: Type.String(),
    op: StringEnum(CHANGE_OPS),
    changed_at: EpochMicros(),
    first_name: NullableText,
    last_name: NullableText,
    full_name: NullableText,
    title: NullableText,
    business_email: NullableText,
    company_name: NullableText,
    company_domain: NullableText,
    city: NullableText,
    state: NullableText,
    postal_code: NullableText,
    name_source: NullableText,
    resolved_by: NullableText,
    first_seen_at: NullableEpochMicros,
    last_seen_at: NullableEpochMicros,
    updated_at: NullableEpochMicros,
    emails: Type.Array(Type.Object({ value: NullableText, kind: NullableText, verified: Nullable(Type.Boolean()) }, { additionalProperties: false })),
    phones: Type.Array(
      Type.Object({ value: NullableText, kind: NullableText, dnc: Nullable(Type.Boolean()), dnc_known: Type.Boolean() }, { additionalProperties: false }),
    ),
    traits: Type.Array(Type.Object({ key: NullableText, label: NullableText, value: NullableText, group: Type.String() }, { additionalProperties: false })),
    custom_fields: Type.String({ description: 'JSON text of the stored custom fields (`{key: {value, source, enriched_at}}`), keys sorted' }),
    trace_id: Nullable(
      Type.String({ pattern: '^[0-9a-f]{32}$', description: 'the trace the change was made in (Cloud Trace id); null: none (the export command)' }),
    ),
  },
  { title: 'ChangeRow', additionalProperties: false },
)

/**
 * The same row for a `bq load` of newline-delimited JSON (the export command): a load job takes
 * a TIMESTAMP as a date-time string (BigQuery's JSON loading rules), so these four columns are
 * ISO-8601 UTC strings here; every other column is ChangeRow's.
 */
export const ChangeLoadRow = Type.Object(
  { ...ChangeRow.properties, changed_at: Instant(), first_seen_at: NullableInstant, last_seen_at: NullableInstant, updated_at: NullableInstant },
  { title: 'ChangeLoadRow', additionalProperties: false },
)

// ---- webhook delivery tasks (dispatcher -> Cloud Tasks -> dispatcher) -----------------------

export const DELIVERY_JOB_VERSION = 1

/** One Cloud Tasks task = one HTTP attempt of one delivery (domain/webhooks/deliveries.ts). */
export const DeliveryJob = Type.Object(
  {
    v: Type.Literal(DELIVERY_JOB_VERSION, { description: 'the payload version; a consumer drops any other' }),
    delivery_id: NonEmpty(),
    seq: Type.Integer({ minimum: 1, description: 'the position of this attempt in `attempts` (1-based); a task whose attempt is already recorded is stale' }),
    attempt: Type.Integer({ minimum: 1, description: 'the attempt within the current run (1..MAX_ATTEMPTS); a replay starts a new run at 1' }),
    rate_slot: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          "on a shared (pool) queue: the start (ms since the epoch) of the endpoint's rate window this task was deferred to and already counted in; absent: counted when it runs (domain/webhooks/pool-admission.ts)",
      }),
    ),
  },
  { title: 'DeliveryJob' },
)

export type BatchMessageAttributes = Static<typeof BatchMessageAttributes>
export type BatchShape = (typeof BATCH_SHAPES)[number]
export type ChangeRowAttributes = Static<typeof ChangeRowAttributes>
export type ChangeRow = Static<typeof ChangeRow>
export type ChangeLoadRow = Static<typeof ChangeLoadRow>
export type ChangeOp = (typeof CHANGE_OPS)[number]
export type DeliveryJob = Static<typeof DeliveryJob>
