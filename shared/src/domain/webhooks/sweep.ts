import type { PlatformDeps } from '../../ports/deps.ts'
import { resumeDelivery, type EnqueueDeps } from './deliveries.ts'

/**
 * The way back for a delivery whose task is gone. A waiting delivery (pending or retrying) always
 * has a task in Cloud Tasks, unless the queue gave up on it (the dispatcher unreachable longer
 * than the queue's retry window, adapters/google/cloud-tasks-scheduler.ts) or the enqueue after
 * its record never happened. The sweep finds waiting deliveries whose next_attempt_at passed
 * more than `graceMs` ago and enqueues the task each waits for under its own name
 * (resumeDelivery): a live task answers ALREADY_EXISTS and nothing changes, so the sweep is
 * idempotent with live tasks and with other instances sweeping at the same time; a name freed
 * less than about an hour ago is still refused, and the next sweep tries again.
 */
export interface SweepOptions {
  /** how long past its next_attempt_at a delivery must be before it is checked */
  graceMs: number
  /** deliveries checked per sweep, oldest first: bounded work per run */
  limit: number
}

/**
 * 10 min of grace: a task behind a backlog of its queue is still live (the enqueue is a no-op).
 * At most 100 deliveries per sweep, each one createTask call.
 */
export const SWEEP_DEFAULTS: SweepOptions = { graceMs: 10 * 60_000, limit: 100 }
/** at most one sweep per instance in this interval */
const SWEEP_INTERVAL_MS = 5 * 60_000

export interface SweepResult {
  checked: number
  /** enqueued again (a no-op where the task was live) */
  resumed: number
  failed: number
}

export async function sweepStrandedDeliveries(
  deps: EnqueueDeps & Pick<PlatformDeps, 'deliveries'>,
  options: SweepOptions = SWEEP_DEFAULTS,
): Promise<SweepResult> {
  const before = new Date(deps.clock.now() - options.graceMs).toISOString()
  const due = await deps.deliveries.listDue(before, options.limit)
  const result: SweepResult = { checked: due.length, resumed: 0, failed: 0 }
  for (const delivery of due) {
    try {
      if (await resumeDelivery(deps, delivery)) result.resumed++
    } catch (err) {
      // one delivery whose queue cannot take tasks must not hold up the others
      result.failed++
      deps.logger.warn({ err, deliveryId: delivery.id, integrationId: delivery.integration_id }, 'stranded-delivery sweep: enqueue failed')
    }
  }
  if (due.length > 0) deps.logger.info({ event: 'delivery_sweep', ...result, before }, 'stranded-delivery sweep')
  return result
}

/**
 * Runs the sweep from the dispatcher's own requests (Cloud Run gives an instance CPU only while
 * it serves one): at most once per `intervalMs` per instance, one at a time, never throwing (a
 * failed sweep must not fail the request that ran it). Every instance sweeps; the task names
 * keep their sweeps from enqueuing anything twice.
 */
export interface DeliverySweeper {
  maybeRun(): Promise<void>
}

export function createDeliverySweeper(
  deps: Parameters<typeof sweepStrandedDeliveries>[0],
  intervalMs = SWEEP_INTERVAL_MS,
  options = SWEEP_DEFAULTS,
): DeliverySweeper {
  let lastStart = Number.NEGATIVE_INFINITY
  let running: Promise<void> | null = null
  return {
    async maybeRun(): Promise<void> {
      const now = deps.clock.now()
      if (running || now - lastStart < intervalMs) return
      lastStart = now
      running = sweepStrandedDeliveries(deps, options)
        .then(() => {})
        .catch((err: unknown) => deps.logger.warn({ err }, 'stranded-delivery sweep failed'))
        .finally(() => {
          running = null
        })
      await running
    },
  }
}
