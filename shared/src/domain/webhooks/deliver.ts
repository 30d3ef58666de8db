import type { PlatformDeps } from '../../ports/deps.ts'
import type { DeliveryAttempted } from '../../ports/listeners.ts'
import type { DeliveryAttempt, DeliveryRecord, IntegrationRecord } from '../../model/records.ts'
import type { DeliveryJob } from '../../contract/messages.ts'
import { enqueueAttempt, readDeliveryTask } from './deliveries.ts'
import { GONE_REASON, MAX_ATTEMPTS, parseRetryAfter, retryDelayMs } from './schedule.ts'
import { activeSecrets, signatureHeaders } from './signing.ts'
import { checkUrlStatically } from './ssrf.ts'
import { holdForEndpointRate } from './pool-admission.ts'
import { tellListeners } from '../outcomes/tell.ts'

export type AttemptOutcome = 'succeeded' | 'retrying' | 'failed' | 'disabled' | 'stale'

/** The task ran nothing: the delivery is gone, or this attempt was already made. */
type Stale = { outcome: 'stale' }

type SentAnswer = Pick<DeliveryAttempt, 'status_code' | 'error' | 'latency_ms' | 'response_excerpt'> & {
  response_headers: DeliveryAttempt['response_headers'] | null
  retryAfterMs: number | null
}

/** One signed POST of the stored bytes, or why none was sent (a refused destination, no secret). */
async function send(deps: PlatformDeps, target: IntegrationRecord, delivery: DeliveryRecord, nowMs: number): Promise<SentAnswer> {
  const none = { status_code: null, latency_ms: 0, response_excerpt: null, response_headers: null, retryAfterMs: null }
  const staticCheck = checkUrlStatically(target.url, deps.config.allowLoopbackWebhooks)
  if (!staticCheck.ok) return { ...none, error: `destination not allowed: ${staticCheck.reason}` }
  const secrets = activeSecrets(target.signing_secrets, nowMs)
  if (secrets.length === 0) return { ...none, error: 'no signing secret' }
  const body = Buffer.from(delivery.body, 'utf8')
  const headers = signatureHeaders(secrets, delivery.event_id, nowMs, body) as unknown as Record<string, string>
  const res = await deps.webhookSender.post(target.url, body, headers)
  return {
    status_code: res.statusCode,
    error: res.error,
    latency_ms: res.latencyMs,
    response_excerpt: res.excerpt,
    response_headers: res.headers ?? null,
    retryAfterMs: parseRetryAfter(res.retryAfter, deps.clock.now()),
  }
}

/**
 * Runs one delivery task: one signed POST of the stored body bytes, recorded in the delivery
 * log. Only 200 acknowledges. 410 disables the integration. Any other answer or transport
 * error schedules the next attempt as a new task (jittered schedule, Retry-After honoured)
 * until MAX_ATTEMPTS, then the delivery is `failed` and kept for replay. Returns what the attempt
 * ended as (DeliveryAttempted) and tells nobody: the task handler below hands it to the
 * listeners. Never throws for a receiver's failure; a throw (store unavailable) lets the
 * scheduler retry the same task, which is safe: a recorded attempt makes the task stale.
 */
export async function runDeliveryJob(deps: PlatformDeps, job: DeliveryJob, random: () => number = Math.random): Promise<DeliveryAttempted | Stale> {
  const delivery = await deps.deliveries.get(job.delivery_id)
  if (!delivery) return { outcome: 'stale' }
  if (delivery.attempts.length !== job.seq - 1) {
    // already ran: if it was the last recorded attempt and asked for a retry, make sure that
    // retry is scheduled (a crash between writing the log and enqueueing must not strand it)
    if (delivery.attempts.length === job.seq && delivery.status === 'retrying' && delivery.next_attempt_at) {
      await enqueueAttempt(deps, delivery, { seq: job.seq + 1, attempt: job.attempt + 1 }, new Date(delivery.next_attempt_at))
    }
    return { outcome: 'stale' }
  }
  if (delivery.status === 'succeeded' && job.attempt !== 1) return { outcome: 'stale' }

  const nowMs = deps.clock.now()
  const target = await deps.deliveryTargets.get(delivery.integration_id)
  const at = new Date(nowMs).toISOString()
  const answer: SentAnswer =
    target?.active === true
      ? await send(deps, target, delivery, nowMs)
      : { status_code: null, error: 'integration is not active', latency_ms: 0, response_excerpt: null, response_headers: null, retryAfterMs: null }
  const { retryAfterMs, ...sent } = answer
  const attempt: DeliveryAttempt = { attempt: job.attempt, at, ...sent }
  const record = async (outcome: DeliveryAttempted['outcome'], patch: Pick<DeliveryRecord, 'status' | 'next_attempt_at'>): Promise<DeliveryAttempted> => {
    const updated: DeliveryRecord = { ...delivery, ...patch, attempts: [...delivery.attempts, attempt], updated_at: new Date(deps.clock.now()).toISOString() }
    await deps.deliveries.put(updated)
    return { outcome, delivery: updated, attempt, target, maxAttempts: MAX_ATTEMPTS }
  }

  if (!target?.active) return record('failed', { status: 'failed', next_attempt_at: null })
  if (attempt.status_code === 200) return record('succeeded', { status: 'succeeded', next_attempt_at: null })
  if (attempt.status_code === 410) {
    const done = await record('disabled', { status: 'failed', next_attempt_at: null })
    await deps.tenants.updateIntegration(target.id, { active: false, disabled_reason: GONE_REASON, updated_at: new Date(deps.clock.now()).toISOString() })
    return done
  }
  const delay = retryDelayMs(job.attempt + 1, random(), retryAfterMs)
  if (delay === null) return record('failed', { status: 'failed', next_attempt_at: null })
  const next = new Date(deps.clock.now() + delay)
  const done = await record('retrying', { status: 'retrying', next_attempt_at: next.toISOString() })
  await enqueueAttempt(deps, done.delivery, { seq: job.seq + 1, attempt: job.attempt + 1 }, next)
  return done
}

/**
 * The TaskHandler both paths use: Cloud Tasks' POST /tasks/deliver and the embedded runner. It
 * runs the job and hands what it ended as to the delivery listeners (platform/listeners.ts).
 * `random` is the jitter source in [0,1) (tests fix it).
 */
export function createDeliveryTaskHandler(deps: PlatformDeps, random: () => number = Math.random) {
  // `meta.queue`: the task's queue; on a shared pool queue the endpoint's rate is held here (pool-admission.ts)
  return async (payload: Buffer, meta?: { queue: string }): Promise<AttemptOutcome | 'invalid' | 'deferred'> => {
    const job = readDeliveryTask(payload)
    if (!job.ok) {
      // done, not failed: the scheduler would only run the same bytes again
      deps.logger.error({ reason: job.reason, bytes: payload.length }, 'dropping an unreadable delivery task')
      return 'invalid'
    }
    if (meta && (await holdForEndpointRate(deps, job.value, meta.queue))) return 'deferred'
    const attempted = await runDeliveryJob(deps, job.value, random)
    if (attempted.outcome !== 'stale') await tellListeners(deps.listeners.delivery, deps, (l) => l.onDeliveryAttempted(attempted, deps))
    return attempted.outcome
  }
}
