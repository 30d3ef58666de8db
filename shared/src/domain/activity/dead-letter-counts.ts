import type { PlatformDeps } from '../../ports/deps.ts'
import type { BatchListener } from '../../ports/listeners.ts'
import { countDeadLetters } from './counts.ts'

/**
 * The portal's dead-letter activity (docs/portal.md, "Activity"): records the worker parked, per
 * account, day and reason.
 *
 * Failure contract: a count that cannot be stored is logged and dropped (countDeadLetters); it
 * never fails the batch, whose records are already parked.
 */
export function deadLetterCounts(deps: Pick<PlatformDeps, 'rateLimiter' | 'clock' | 'logger'>): BatchListener {
  return {
    name: 'dead-letter counts',
    async onBatchApplied(outcome) {
      // a message that cannot be read counts as one (its records cannot be counted either)
      if (outcome.kind === 'unreadable') return countDeadLetters(deps, outcome.accountId, 'unreadable', 1)
      await countDeadLetters(deps, outcome.accountId, 'too_large', outcome.deadLettered.too_large)
      await countDeadLetters(deps, outcome.accountId, 'store_failed', outcome.deadLettered.store_failed)
    },
  }
}
