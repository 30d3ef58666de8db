import type { PlatformDeps } from '../../ports/deps.ts'
import type { BatchListener } from '../../ports/listeners.ts'

/**
 * The worker's metric lines for an applied batch: one `contact_records` line per outcome its
 * records had (the log-based metric contact_records, infra/monitoring.tf, sums `records` by
 * `outcome`: a counter metric can only count lines, so the count travels in the line), and one
 * `contact_batch` line with the push-to-visible lag (the metric contact_apply_lag).
 *
 * Failure contract: none; writing a log line does not fail.
 */
export function batchLines(deps: Pick<PlatformDeps, 'logger' | 'clock'>): BatchListener {
  return {
    name: 'batch lines',
    async onBatchApplied(outcome) {
      if (outcome.kind !== 'applied') return
      const log = deps.logger.child({ batchId: outcome.batchId })
      const stored = outcome.applied + outcome.unchanged
      const count = (reason: string) => outcome.refused.filter((r) => r.field === null && r.reason === reason).length
      const records = {
        accepted: stored,
        no_external_id: count('no external_id'),
        too_large: outcome.deadLettered.too_large,
        store_failed: outcome.deadLettered.store_failed,
      }
      for (const [kind, n] of Object.entries(records)) {
        if (n > 0) log.info({ event: 'contact_records', outcome: kind, records: n }, 'contact records')
      }
      log.info(
        {
          event: 'contact_batch',
          // push-to-visible: from the edge's 202 to the records stored and their change rows
          // published, retries and redeliveries included (the metric contact_apply_lag)
          lagMs: Math.max(0, deps.clock.now() - Date.parse(outcome.receivedAt)),
          records: outcome.records,
          upserted: stored + outcome.deadLettered.store_failed,
          withoutAnchor: records.no_external_id,
          changed: outcome.changed,
          deadLettered: outcome.deadLettered.too_large + outcome.deadLettered.store_failed,
        },
        'batch upserted',
      )
    },
  }
}
