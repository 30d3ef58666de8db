import type { PlatformDeps } from '../../ports/deps.ts'
import type { DeliveryAttempt, DeliveryRecord } from '../../model/records.ts'
import type { DeliveryJob } from '../../contract/messages.ts'
import { enqueueAttempt, readDeliveryTask } from './deliveries.ts'
import { MAX_ATTEMPTS, parseRetryAfter, retryDelayMs } from './schedule.ts'
import { activeSecrets, signatureHeaders } from './signing.ts'
import { checkUrlStatically } from './ssrf.ts'
import { operatorTarget } from '../operations/target.ts'
import { OPERATOR_INTEGRATION_ID } from '../operations/operator-ids.ts'
import { noteEndpointOutcome } from '../operations/endpoint-failing.ts'
import { holdForEndpointRate } from './pool-admission.ts'
import { activeTraceId } from '../../logging/trace-propagation.ts'

export const GONE_REASON = 'endpoint answered 410'

export type AttemptOutcome = 'succeeded' | 'retrying' | 'failed' | 'disabled' | 'stale'

/**
 * Runs one delivery task: one signed POST of the stored body bytes, recorded in the delivery
 * log. Only 200 acknowledges. 410 disables the integration. Any other answer or transport
 * error schedules the next attempt as a new task (jittered schedule, Retry-After honoured)
 * until MAX_ATTEMPTS, then the delivery is `failed` and kept for replay. Never throws for a
 * receiver's failure; a throw (store unavailable) lets the scheduler retry the same task,
 * which is safe: a recorded attempt makes the task stale.
 */
export async function runDeliveryJob(deps: PlatformDeps, job: DeliveryJob, random: () => number = Math.random): Promise<AttemptOutcome> {
  const delivery = await deps.deliveries.get(job.delivery_id)
  if (!delivery) return 'stale'
  if (delivery.attempts.length !== job.seq - 1) {
    // already ran: if it was the last recorded attempt and asked for a retry, make sure that
    // retry is scheduled (a crash between writing the log and enqueueing must not strand it)
    if (delivery.attempts.length === job.seq && delivery.status === 'retrying' && delivery.next_attempt_at) {
      await enqueueAttempt(deps, delivery, { seq: job.seq + 1, attempt: job.attempt + 1 }, new Date(delivery.next_attempt_at))
    }
    return 'stale'
  }
  if (delivery.status === 'succeeded' && job.attempt !== 1) return 'stale'

  const nowMs = deps.clock.now()
  // operational events are deliveries to the operator's endpoint (domain/operations/target.ts)
  const integration =
    delivery.integration_id === OPERATOR_INTEGRATION_ID ? await operatorTarget(deps) : await deps.tenantLookups.getIntegration(delivery.integration_id)
  const record = async (attempt: DeliveryAttempt, patch: Partial<DeliveryRecord>) => {
    const updated: DeliveryRecord = { ...delivery, ...patch, attempts: [...delivery.attempts, attempt], updated_at: new Date(deps.clock.now()).toISOString() }
    await deps.deliveries.put(updated)
    return updated
  }
  const at = new Date(nowMs).toISOString()
  /**
   * One log line per attempt, whatever its outcome: ids, attempt, status and the transport error
   * only — never the endpoint URL (it may carry the receiver's own credentials), a secret or a body.
   */
  const logAttempt = (outcome: AttemptOutcome, fields: { statusCode: number | null; error: string | null; latencyMs: number; nextAttemptAt?: string }) => {
    const line = {
      event: 'webhook_delivery',
      outcome,
      deliveryId: delivery.id,
      integrationId: delivery.integration_id,
      accountId: delivery.account_id,
      eventId: delivery.event_id,
      attempt: job.attempt,
      maxAttempts: MAX_ATTEMPTS,
      statusCode: fields.statusCode,
      error: fields.error,
      latencyMs: fields.latencyMs,
      ...(fields.nextAttemptAt ? { nextAttemptAt: fields.nextAttemptAt } : {}),
      // the attempt's trace (the visit's, carried by the task) in plain sight, also where no project names it for Cloud Logging
      traceId: activeTraceId(),
    }
    if (outcome === 'succeeded') deps.logger.info(line, 'webhook delivered')
    else if (outcome === 'retrying') deps.logger.warn(line, 'webhook delivery failed: retry scheduled')
    else if (outcome === 'disabled') deps.logger.warn(line, 'integration disabled: endpoint answered 410')
    else deps.logger.error(line, 'webhook delivery failed: giving up')
  }
  if (!integration || !integration.active) {
    await record(
      { attempt: job.attempt, at, status_code: null, error: 'integration is not active', latency_ms: 0, response_excerpt: null },
      { status: 'failed', next_attempt_at: null },
    )
    logAttempt('failed', { statusCode: null, error: 'integration is not active', latencyMs: 0 })
    return 'failed'
  }

  const staticCheck = checkUrlStatically(integration.url, deps.config.allowLoopbackWebhooks)
  let statusCode: number | null = null
  let error: string | null = null
  let latencyMs = 0
  let excerpt: string | null = null
  let responseHeaders: Record<string, string> | null = null
  let retryAfterMs: number | null = null
  const secrets = activeSecrets(integration.signing_secrets, nowMs)
  if (!staticCheck.ok) error = `destination not allowed: ${staticCheck.reason}`
  else if (secrets.length === 0) error = 'no signing secret'
  else {
    const body = Buffer.from(delivery.body, 'utf8')
    const headers = signatureHeaders(secrets, delivery.event_id, nowMs, body) as unknown as Record<string, string>
    const res = await deps.webhookSender.post(integration.url, body, headers)
    statusCode = res.statusCode
    error = res.error
    latencyMs = res.latencyMs
    excerpt = res.excerpt
    responseHeaders = res.headers ?? null
    retryAfterMs = parseRetryAfter(res.retryAfter, deps.clock.now())
  }
  const attempt: DeliveryAttempt = {
    attempt: job.attempt,
    at,
    status_code: statusCode,
    error,
    latency_ms: latencyMs,
    response_excerpt: excerpt,
    response_headers: responseHeaders,
  }

  const outcome = { statusCode, error, latencyMs }
  if (statusCode === 200) {
    await record(attempt, { status: 'succeeded', next_attempt_at: null })
    logAttempt('succeeded', outcome)
    // health: a success ends a failure streak (domain/operations/endpoint-failing.ts)
    await noteEndpointOutcome(deps, integration, { kind: 'succeeded' })
    return 'succeeded'
  }
  if (statusCode === 410) {
    await record(attempt, { status: 'failed', next_attempt_at: null })
    await deps.tenants.updateIntegration(integration.id, { active: false, disabled_reason: GONE_REASON, updated_at: new Date(deps.clock.now()).toISOString() })
    logAttempt('disabled', outcome)
    await noteEndpointOutcome(deps, integration, { kind: 'disabled', reason: GONE_REASON, at })
    return 'disabled'
  }
  const delay = retryDelayMs(job.attempt + 1, random(), retryAfterMs)
  if (delay === null) {
    await record(attempt, { status: 'failed', next_attempt_at: null })
    logAttempt('failed', outcome)
    await noteEndpointOutcome(deps, integration, { kind: 'failed', error: statusCode !== null ? `HTTP ${statusCode}` : error })
    return 'failed'
  }
  const next = new Date(deps.clock.now() + delay)
  const updated = await record(attempt, { status: 'retrying', next_attempt_at: next.toISOString() })
  await enqueueAttempt(deps, updated, { seq: job.seq + 1, attempt: job.attempt + 1 }, next)
  logAttempt('retrying', { ...outcome, nextAttemptAt: next.toISOString() })
  await noteEndpointOutcome(deps, integration, { kind: 'failed', error: statusCode !== null ? `HTTP ${statusCode}` : error })
  return 'retrying'
}

/** The TaskHandler both paths use: Cloud Tasks' POST /tasks/deliver and the embedded runner. */
/** `random` is the jitter source in [0,1) (tests fix it). */
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
    return runDeliveryJob(deps, job.value, random)
  }
}
