import type { DeliveryAttempt, DeliveryRecord, IntegrationRecord } from '../model/records.ts'
import type { BatchShape } from '../contract/messages.ts'
import type { PayloadProblem, PushCredential, Refusal } from './push-log.ts'
import type { ContactWrittenListener } from './contact-store.ts'
import type { BaseLogger } from 'pino'

/*
 * Outcomes of the hot paths and the listeners that react to them (docs/architecture.md,
 * "Outcomes and listeners"). A hot path returns or emits its outcome and names no observer; the
 * composition root (platform/listeners.ts) builds one typed list per outcome. Each listener
 * states its failure contract where it is defined. No string-keyed emitter: a call of a listener
 * is a call of a typed method, found by "go to definition".
 */

/** What one delivery attempt ended as (domain/webhooks/deliver.ts runDeliveryJob). */
export interface DeliveryAttempted {
  outcome: 'succeeded' | 'retrying' | 'failed' | 'disabled'
  /** the delivery as recorded with this attempt (status, next_attempt_at, attempts) */
  delivery: DeliveryRecord
  /** the attempt just recorded: its time, answer, error and latency */
  attempt: DeliveryAttempt
  /**
   * the endpoint as the attempt found it (before a 410 disabled it): a tenant integration or the
   * operator's; null when there was none (deleted, or the operator's without a URL)
   */
  target: IntegrationRecord | null
  /** the last attempt of a delivery's run (domain/webhooks/schedule.ts MAX_ATTEMPTS) */
  maxAttempts: number
}

/** What the edge answered to one push (services/edge-ingest/src/routes/push.ts, onResponse). */
export interface PushAnswered {
  requestId: string
  headers: Record<string, string | string[] | undefined>
  status: number
  /** the account the subdomain named; null when the request did not get that far */
  accountId: string | null
  /** the connection the presented credential named (accepted or refused), and that credential */
  connection: { id: string; credential: PushCredential } | null
  /** the error envelope's `error` text as sent (bounded); null on success */
  error: string | null
  /** the push as queued: `accepted` of the 202 and its first records as parsed (at most domain/ingest LISTENED_RECORDS); null when not queued */
  accepted: { count: number; shape: BatchShape; records: readonly Record<string, unknown>[] } | null
  /** a 400 `invalid payload`: the field it was about, when the edge named one (domain/ingest/payload-problem.ts) */
  problem?: PayloadProblem | null
}

/** An endpoint's new task queue took no tasks yet: its deliveries went to a pool queue (domain/webhooks/queue-pool.ts). */
export interface DeliveryQueueFellBack {
  queue: string
  integrationId: string
  poolQueue: string
  at: string
}

/** What one `contact-batches` message came to (services/upsert-worker/src/handle-batch.ts). */
export type BatchApplied =
  | {
      kind: 'applied'
      accountId: string
      connectionId: string
      batchId: string
      /** the push's request id, when the batch message carries it (the inbound debugger's entry) */
      requestId: string | null
      receivedAt: string
      /** records in the batch */
      records: number
      /** records stored that changed their contact */
      applied: number
      /** records stored that changed nothing (a redelivery, or the same values again) */
      unchanged: number
      /** records not stored and values not stored, with their reasons */
      refused: Refusal[]
      /** records parked on the dead-letter topic, by reason */
      deadLettered: { too_large: number; store_failed: number }
      /** contacts changed (their change rows went out through the contact-write seam) */
      changed: number
    }
  /** a message that can never be read, parked as it came */
  | { kind: 'unreadable'; accountId: string | undefined; reason: string }

/**
 * An endpoint's state changed (domain/operations/endpoint-failing.ts, after its mark is written):
 * it started failing (the first step of the failure threshold), was disabled (a 410), or answered
 * 200 again after failing. Told once per change, not per attempt.
 */
export type EndpointHealthChanged =
  | {
      state: 'failing'
      endpoint: IntegrationRecord
      at: string
      /** when the streak began: the oldest failed delivery in it */
      since: string
      consecutiveFailures: number
      threshold: number
      lastError: string | null
    }
  | { state: 'disabled'; endpoint: IntegrationRecord; at: string; reason: string }
  | { state: 'recovered'; endpoint: IntegrationRecord; at: string; since: string }

/** What every listener gets besides the outcome. */
export interface ListenerContext {
  /** the logger of the work that produced the outcome (its request or task: ids and trace) */
  logger: BaseLogger
}

interface Named {
  /** for the log line when it throws */
  readonly name: string
}

export interface DeliveryListener extends Named {
  onDeliveryAttempted(outcome: DeliveryAttempted, ctx: ListenerContext): void | Promise<void>
}

export interface PushListener extends Named {
  /** called in the push's onResponse, after the answer is sent: must not await a store */
  onPushAnswered(outcome: PushAnswered, ctx: ListenerContext): void
}

export interface BatchListener extends Named {
  /**
   * told after the batch's records are stored and its dead letters parked, before the message
   * is acked: a rejection is logged (tellListeners) and the batch is still acked
   */
  onBatchApplied(outcome: BatchApplied, ctx: ListenerContext): void | Promise<void>
}

export interface QueueFallbackListener extends Named {
  onDeliveryQueueFellBack(outcome: DeliveryQueueFellBack, ctx: ListenerContext): void | Promise<void>
}

export interface EndpointHealthListener extends Named {
  onEndpointHealthChanged(change: EndpointHealthChanged, ctx: ListenerContext): void | Promise<void>
}

/** The listeners of each outcome, in the order they are told. */
export interface Listeners {
  delivery: readonly DeliveryListener[]
  push: readonly PushListener[]
  queueFallback: readonly QueueFallbackListener[]
  /** an endpoint started failing, was disabled or recovered (domain/operations/endpoint-failing.ts) */
  endpointHealth: readonly EndpointHealthListener[]
  /** every contact-batches message the worker finished (services/upsert-worker/src/handle-batch.ts) */
  batch: readonly BatchListener[]
  /**
   * every write to the contact store, whoever made it (domain/contacts/write-seam.ts); unlike the
   * others, a listener that rejects fails the write (ports/contact-store.ts)
   */
  contactWritten: readonly ContactWrittenListener[]
  /** writes what listeners gather in memory (an app closing, before the stores close; tests) */
  flush(): Promise<void>
}
