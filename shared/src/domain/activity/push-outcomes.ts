import type { PlatformDeps } from '../../ports/deps.ts'
import type { BatchListener } from '../../ports/listeners.ts'
import { PUSH_LOG_RETENTION_MS } from './push-log.ts'

/** refusals kept per push for the debugger (the count says how many there were) */
const REFUSALS_KEPT = 20

/**
 * The inbound debugger's "accepted N, refused M (why)" (docs/portal.md): the edge answers 202
 * before the worker reads a record, so what the worker refuses (a record without `external_id`,
 * a value that is not an email address, a record too large to store) is written back onto the
 * push's entry, by the request id its batch message carries. Only pushes with a refusal get a
 * write; a batch queued without a request id (older edge) has no entry to write to.
 *
 * Failure contract: a debugger note; one that cannot be stored is logged and dropped, never fails
 * the batch (its records are stored).
 */
export function pushOutcomes(deps: Pick<PlatformDeps, 'pushLog' | 'clock' | 'logger'>): BatchListener {
  return {
    name: 'push refusals',
    async onBatchApplied(outcome) {
      if (outcome.kind !== 'applied' || outcome.requestId === null || outcome.refused.length === 0) return
      const nowMs = deps.clock.now()
      await deps.pushLog
        .recordOutcome(
          outcome.connectionId,
          outcome.requestId,
          {
            stored: outcome.applied + outcome.unchanged,
            refused_count: outcome.refused.length,
            refused: outcome.refused.slice(0, REFUSALS_KEPT),
            at: new Date(nowMs).toISOString(),
          },
          nowMs + PUSH_LOG_RETENTION_MS,
        )
        .catch((err: unknown) => deps.logger.warn({ err, batchId: outcome.batchId }, 'refusals of a push not stored for its debugger'))
    },
  }
}
