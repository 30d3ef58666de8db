import type { PlatformDeps } from '../../ports/deps.ts'
import type { DeliveryRecord, IntegrationRecord } from '../../model/records.ts'
import type { DeliveryAttempted, DeliveryListener, EndpointHealthChanged } from '../../ports/listeners.ts'
import { FAILING_STEPS } from '../../contract/operational-event.ts'
import { emitOperationalEvent, type OperationsDeps } from './emit.ts'
import { OPERATOR_INTEGRATION_ID } from './operator-ids.ts'
import { GONE_REASON } from '../webhooks/schedule.ts'
import { tellListeners } from '../outcomes/tell.ts'
import { accountOfAlertTarget } from '../alerts/target.ts'

/**
 * The failure threshold of an endpoint: this many of its newest deliveries in a row whose latest
 * attempt failed (any answer but 200, or none). `endpoint.failing` is sent when the streak
 * reaches 50, 70, 90 and 100 % of it (10, 14, 18, 20), once per step and streak; the streak ends
 * with the next delivery answered 200. Reaching 100 % does not disable the endpoint: deliveries
 * keep their retry schedule (only a 410 disables, `endpoint.disabled`).
 */
export const FAILURE_THRESHOLD = 20

/** what the attempt just recorded ended as */
type EndpointOutcome = { kind: 'succeeded' } | { kind: 'failed'; error: string | null } | { kind: 'disabled'; reason: string; at: string }

const hostOf = (url: string): string => {
  try {
    return new URL(url).host
  } catch {
    return ''
  }
}

const failedLast = (d: DeliveryRecord): boolean | null => {
  const last = d.attempts.at(-1)
  return last ? last.status_code !== 200 : null
}

/** The streak among the newest deliveries (newest first): its length and the oldest delivery in it. */
function failureStreak(newestFirst: readonly DeliveryRecord[]): { length: number; oldest: DeliveryRecord | null } {
  let length = 0
  let oldest: DeliveryRecord | null = null
  for (const d of newestFirst) {
    const failed = failedLast(d)
    if (failed === null) continue // not attempted yet: neither extends nor ends the streak
    if (!failed) break
    length++
    oldest = d
  }
  return { length, oldest }
}

/** The highest step (50, 70, 90, 100) a streak of this length reaches, or 0. */
function stepOf(length: number, threshold = FAILURE_THRESHOLD): number {
  let reached = 0
  for (const p of FAILING_STEPS) if (length >= Math.ceil((p / 100) * threshold)) reached = p
  return reached
}

/**
 * The endpoint.failing / endpoint.disabled listener: after each recorded attempt to a tenant
 * endpoint (domain/webhooks/deliver.ts), keeps the integration's `failing` mark (the portal's
 * banner) and sends `endpoint.failing` and `endpoint.disabled`. One bounded read
 * (FAILURE_THRESHOLD deliveries) after a failed attempt, none after a success; a tenant write only
 * when a step is crossed or a streak ends.
 *
 * Failure contract: never throws (a failed note is logged); the attempt is recorded, and a lost
 * note is made again by the next attempt, with the same event id (no second POST).
 */
export function endpointFailingListener(deps: HealthDeps): DeliveryListener {
  return {
    name: 'endpoint failing and disabled events',
    async onDeliveryAttempted(o: DeliveryAttempted) {
      // no endpoint, or one that was not active: nothing was sent, nothing about its health is new
      if (!o.target?.active) return
      const code = o.attempt.status_code
      const outcome: EndpointOutcome =
        o.outcome === 'succeeded'
          ? { kind: 'succeeded' }
          : o.outcome === 'disabled'
            ? { kind: 'disabled', reason: GONE_REASON, at: o.attempt.at }
            : { kind: 'failed', error: code !== null ? `HTTP ${code}` : o.attempt.error }
      await noteEndpointOutcome(deps, o.target, outcome)
    },
  }
}

type HealthDeps = OperationsDeps & Pick<PlatformDeps, 'tenants' | 'listeners'>

/**
 * What the listener does for one attempt (also called by tests for a repeated observation). A
 * change of the endpoint's state (it starts failing, is disabled, works again) is told to the
 * endpoint-health listeners once its mark is written (platform/listeners.ts: the tenant's alerts).
 */
export async function noteEndpointOutcome(deps: HealthDeps, integration: IntegrationRecord, outcome: EndpointOutcome): Promise<void> {
  // the operator's endpoint and the tenants' alert webhooks are not endpoints whose health a tenant watches
  if (integration.id === OPERATOR_INTEGRATION_ID || accountOfAlertTarget(integration.id) !== null) return
  const changed = await noteAndEmit(deps, integration, outcome)
  if (changed) await tellListeners(deps.listeners.endpointHealth, deps, (l) => l.onEndpointHealthChanged(changed, deps))
}

/** Writes the endpoint's mark and sends the operational events; returns the change of state, if any. */
async function noteAndEmit(deps: HealthDeps, integration: IntegrationRecord, outcome: EndpointOutcome): Promise<EndpointHealthChanged | null> {
  // a success on an endpoint that was not failing (almost every attempt) changes nothing: no work
  // at all, not even the host's URL parse below (the check inside the try narrows the type)
  if (outcome.kind === 'succeeded' && !integration.failing) return null
  const endpoint = { account_id: integration.account_id, integration_id: integration.id, host: hostOf(integration.url), name: integration.name ?? null }
  const now = new Date(deps.clock.now()).toISOString()
  let changed: EndpointHealthChanged | null = null
  try {
    if (outcome.kind === 'succeeded') {
      if (!integration.failing) return null
      await deps.tenants.updateIntegration(integration.id, { failing: null, updated_at: now })
      return { state: 'recovered', endpoint: integration, at: now, since: integration.failing.since }
    }
    if (outcome.kind === 'disabled') {
      changed = { state: 'disabled', endpoint: integration, at: outcome.at, reason: outcome.reason }
      await emitOperationalEvent(
        deps,
        { type: 'endpoint.disabled', occurred_at: outcome.at, data: { ...endpoint, reason: outcome.reason } },
        { key: `${integration.id}\u0000${outcome.at}` },
      )
      return changed
    }
    const streak = failureStreak(await deps.deliveries.list(integration.id, { limit: FAILURE_THRESHOLD }))
    const step = stepOf(streak.length)
    if (step === 0 || !streak.oldest || (integration.failing?.percent ?? 0) >= step) return null
    const since = streak.oldest.created_at
    await deps.tenants.updateIntegration(integration.id, { failing: { since, percent: step }, updated_at: now })
    // a change of state only when the endpoint was not failing yet: a higher step is the same state
    if (!integration.failing)
      changed = {
        state: 'failing',
        endpoint: integration,
        at: now,
        since,
        consecutiveFailures: streak.length,
        threshold: FAILURE_THRESHOLD,
        lastError: outcome.error?.slice(0, 512) ?? null,
      }
    await emitOperationalEvent(
      deps,
      {
        type: 'endpoint.failing',
        occurred_at: now,
        data: {
          ...endpoint,
          percent: step as (typeof FAILING_STEPS)[number],
          consecutive_failures: streak.length,
          threshold: FAILURE_THRESHOLD,
          since,
          last_error: outcome.error?.slice(0, 512) ?? null,
        },
      },
      { key: `${integration.id}\u0000${since}\u0000${step}` },
    )
  } catch (err) {
    deps.logger.error({ err, integrationId: integration.id, outcome: outcome.kind }, 'endpoint health note failed')
  }
  // a change whose mark was written is told even when its operational event failed
  return changed
}
