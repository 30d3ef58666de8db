import { createHash } from 'node:crypto'
import type { PlatformDeps } from '../../ports/deps.ts'
import type { QueueRate } from '../../ports/task-scheduler.ts'
import type { DeliveryRecord } from '../../model/records.ts'
import { DELIVERY_JOB_VERSION, DeliveryJob } from '../../contract/messages.ts'
import { messageCheck, type Checked } from '../../contract/message-check.ts'
import { deliveryQueueFor, enqueueOnDeliveryQueue, type QueuePoolDeps } from './queue-pool.ts'
import { activeTraceId } from '../../logging/trace-propagation.ts'

/**
 * Per-endpoint queue rate: bounded rate and concurrency protect the receiver, not us. The rate is
 * WEBHOOK_ENDPOINT_RATE (deliveries per second per endpoint, default 100; Cloud Tasks allows up
 * to 500 per queue); at most 50 deliveries to one endpoint are in flight.
 */
const ENDPOINT_QUEUE_RATE: QueueRate = { maxDispatchesPerSecond: 100, maxConcurrentDispatches: 50 }

/** What scheduling a delivery attempt needs: the scheduler, and the queue pool's choice (queue-pool.ts). */
export type EnqueueDeps = QueuePoolDeps & { config: Pick<PlatformDeps['config'], 'webhookEndpointRate'> }

function endpointQueueRate(config: { webhookEndpointRate?: number } | undefined): QueueRate {
  return { ...ENDPOINT_QUEUE_RATE, maxDispatchesPerSecond: config?.webhookEndpointRate ?? ENDPOINT_QUEUE_RATE.maxDispatchesPerSecond }
}

/** Cloud Tasks queue ids: letters, digits and hyphens, at most 100 characters. */
export function queueNameFor(integrationId: string): string {
  const readable = integrationId.replace(/[^A-Za-z0-9-]/g, '-').slice(0, 40)
  const h = createHash('sha256').update(integrationId).digest('hex').slice(0, 12)
  return `webhook-${readable}-${h}`
}

/** Deterministic: a redelivered visit event yields the same delivery for the same integration. */
export function deliveryIdFor(eventId: string, integrationId: string): string {
  return `dlv_${createHash('sha256').update(`${eventId}\u0000${integrationId}`).digest('base64url').slice(0, 24)}`
}

/** Unique per (attempt position, run attempt): a replay never collides with a pending retry. */
export function taskNameFor(deliveryId: string, seq: number, attempt: number): string {
  return `${deliveryId}-${seq}-${attempt}`
}

/** Schedules one attempt on the endpoint's queue: its own, or a shared pool queue (queue-pool.ts). */
export async function enqueueAttempt(deps: EnqueueDeps, delivery: DeliveryRecord, job: Omit<DeliveryJob, 'v' | 'delivery_id'>, at?: Date): Promise<void> {
  const queue = await deliveryQueueFor(deps, delivery.integration_id, queueNameFor(delivery.integration_id), endpointQueueRate(deps.config))
  const payload: DeliveryJob = { v: DELIVERY_JOB_VERSION, delivery_id: delivery.id, ...job }
  await enqueueOnDeliveryQueue(deps, delivery.integration_id, {
    queue,
    name: taskNameFor(delivery.id, job.seq, job.attempt),
    payload: Buffer.from(JSON.stringify(payload)),
    ...(at ? { scheduleAt: at } : {}),
  })
}

const checkDeliveryJob = messageCheck(DeliveryJob)

/**
 * A task payload -> its job, or why it can never run: not JSON, another version, another shape
 * (contract/messages.ts). Such a task is dropped, never retried: running it again cannot help.
 */
export function readDeliveryTask(payload: Buffer): Checked<DeliveryJob> {
  let parsed: unknown
  try {
    parsed = JSON.parse(payload.toString('utf8'))
  } catch {
    return { ok: false, reason: 'not JSON' }
  }
  return checkDeliveryJob(parsed)
}

/** The job of a task payload, or null when it can never run (for reading what was enqueued). */
export function parseDeliveryJob(payload: Buffer): DeliveryJob | null {
  const read = readDeliveryTask(payload)
  return read.ok ? read.value : null
}

/**
 * The attempt a delivery waits for, as its live task carries it (same task name): a pending
 * delivery waits for the first attempt of its run (the first run, or a replay's), a retrying one
 * for the attempt after its last. Null when it is done (succeeded or failed).
 */
function awaitedJobOf(d: DeliveryRecord): Omit<DeliveryJob, 'v' | 'delivery_id'> | null {
  if (d.status === 'pending') return { seq: d.attempts.length + 1, attempt: 1 }
  if (d.status !== 'retrying') return null
  const last = d.attempts[d.attempts.length - 1]
  return { seq: d.attempts.length + 1, attempt: (last?.attempt ?? 0) + 1 }
}

/**
 * Enqueues the task a pending or retrying delivery waits for, under the name its task had
 * (taskNameFor), at its next_attempt_at: while that task is live (or ran or was deleted within
 * about an hour) Cloud Tasks answers ALREADY_EXISTS and nothing changes; once it is gone (its
 * queue gave up, the enqueue after the record never happened) the delivery gets it back. Never
 * writes the record, so it cannot undo an attempt recorded meanwhile. False when the delivery
 * is done.
 */
export async function resumeDelivery(deps: EnqueueDeps, delivery: DeliveryRecord): Promise<boolean> {
  const job = awaitedJobOf(delivery)
  if (!job) return false
  const at = delivery.next_attempt_at ? new Date(delivery.next_attempt_at) : undefined
  await enqueueAttempt(deps, delivery, job, at)
  return true
}

/**
 * Creates the delivery record (status pending, body = the exact bytes to send) and schedules
 * its first attempt. Idempotent: an existing record is kept as is and the task it waits for is
 * enqueued again (resumeDelivery; the scheduler dedupes task names).
 */
export async function createDelivery(
  deps: EnqueueDeps & Pick<PlatformDeps, 'deliveries'>,
  args: { accountId: string; integrationId: string; eventId: string; body: string; now: string },
): Promise<DeliveryRecord> {
  const id = deliveryIdFor(args.eventId, args.integrationId)
  const existing = await deps.deliveries.get(id)
  if (existing) {
    await resumeDelivery(deps, existing)
    return existing
  }
  const delivery: DeliveryRecord = {
    id,
    account_id: args.accountId,
    integration_id: args.integrationId,
    event_id: args.eventId,
    status: 'pending',
    attempts: [],
    body: args.body,
    next_attempt_at: args.now,
    created_at: args.now,
    updated_at: args.now,
    // the visit's trace, which the delivery task's `traceparent` carries to each attempt
    trace_id: activeTraceId(),
  }
  await deps.deliveries.put(delivery)
  await enqueueAttempt(deps, delivery, { seq: 1, attempt: 1 })
  return delivery
}

/** Replay: a new run of attempts for a kept delivery (any status), starting now. */
export async function replayDelivery(deps: EnqueueDeps & Pick<PlatformDeps, 'deliveries'>, delivery: DeliveryRecord): Promise<DeliveryRecord> {
  const now = new Date(deps.clock.now()).toISOString()
  const updated: DeliveryRecord = { ...delivery, status: 'pending', next_attempt_at: now, updated_at: now }
  await deps.deliveries.put(updated)
  await enqueueAttempt(deps, updated, { seq: delivery.attempts.length + 1, attempt: 1 })
  return updated
}
