import { Type, type Static, type TSchema } from 'typebox'

/**
 * Operational events: what the SaaS operator is told about the platform's own health (issue 23,
 * issue 22 job 5), POSTed to OPERATOR_EVENTS_URL as Standard Webhooks (the same signing as tenant
 * webhooks: `webhook-id` is `id`, the idempotency key; docs/operations.md, "Operational events").
 * One schema; `type` says which `data` follows. Ids are deterministic (domain/operations/emit.ts),
 * so an event observed twice (a retried task, two instances) is one delivery.
 */
/** The steps of the failure threshold at which `endpoint.failing` is sent (as Outpost alerts). */
export const FAILING_STEPS = [50, 70, 90, 100] as const

const Timestamp = Type.String({ format: 'date-time' })
const Id = Type.String({ minLength: 1, maxLength: 256 })

const Endpoint = {
  account_id: Id,
  integration_id: Id,
  /** the host only: an endpoint URL's path or query may carry the receiver's own token */
  host: Type.String({ maxLength: 253, description: "the endpoint URL's host (never the whole URL)" }),
  name: Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description: "the tenant's label for the endpoint" }),
}

const EndpointFailingData = Type.Object(
  {
    ...Endpoint,
    percent: Type.Union([Type.Literal(50), Type.Literal(70), Type.Literal(90), Type.Literal(100)], {
      description: 'the step of the failure threshold reached (FAILING_STEPS)',
    }),
    consecutive_failures: Type.Integer({ minimum: 1, description: 'newest deliveries in a row whose latest attempt failed' }),
    threshold: Type.Integer({ minimum: 1, description: 'the failure threshold (consecutive failing deliveries)' }),
    since: Timestamp,
    last_error: Type.Union([Type.String({ maxLength: 512 }), Type.Null()], { description: 'the last attempt: HTTP status or transport error' }),
  },
  { additionalProperties: false },
)

const EndpointDisabledData = Type.Object(
  {
    ...Endpoint,
    reason: Type.String({ maxLength: 512, description: 'why the platform disabled it, e.g. `endpoint answered 410`' }),
  },
  { additionalProperties: false },
)

const BatchDeadLetteredData = Type.Object(
  {
    subscription: Type.String({ maxLength: 256, description: 'the subscription that gave up on the message (or whose consumer parked it)' }),
    message_id: Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'the dead letter as `<topic>-dead-letter-sub` holds it (the original message id when its attributes carry it)',
    }),
    account_id: Type.Union([Id, Type.Null()], { description: 'the account the batch belongs to, when its attributes say' }),
    delivery_attempts: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    reason: Type.Union([Type.String({ maxLength: 200 }), Type.Null()], {
      description: 'why the consumer parked it (`x-dead-letter-reason`); null when Pub/Sub forwarded it after its delivery attempts',
    }),
  },
  { additionalProperties: false },
)

const QueueCreatedLateData = Type.Object(
  {
    queue: Type.String({ maxLength: 100, description: 'the Cloud Tasks queue id' }),
    integration_id: Type.Union([Id, Type.Null()]),
    // not how long work waited: nothing waits, the pool queue takes the deliveries at once
    pool_queue: Type.String({ maxLength: 100, description: "the pool queue that takes the endpoint's deliveries until its own queue does" }),
  },
  { additionalProperties: false },
)

const envelope = <T extends string, D extends TSchema>(type: T, data: D) =>
  Type.Object(
    {
      id: Type.String({ pattern: '^opev_[A-Za-z0-9_-]{1,64}$', description: 'unique per event; the `webhook-id` header' }),
      type: Type.Literal(type),
      occurred_at: Timestamp,
      data,
    },
    { additionalProperties: false },
  )

export const OperationalEvent = Type.Union(
  [
    envelope('endpoint.failing', EndpointFailingData),
    envelope('endpoint.disabled', EndpointDisabledData),
    envelope('batch.dead_lettered', BatchDeadLetteredData),
    envelope('queue.created_late', QueueCreatedLateData),
  ],
  { title: 'OperationalEvent' },
)

export type OperationalEvent = Static<typeof OperationalEvent>
/** an event before emitOperationalEvent gives it its id */
export type NewOperationalEvent = OperationalEvent extends infer E ? (E extends { id: string } ? Omit<E, 'id'> : never) : never
