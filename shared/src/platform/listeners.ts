import type { PlatformDeps } from '../ports/deps.ts'
import type { Listeners } from '../ports/listeners.ts'
import { changeFeed } from '../domain/contacts/change-feed.ts'
import { batchLines } from '../domain/ingest/batch-lines.ts'
import { deadLetterCounts } from '../domain/activity/dead-letter-counts.ts'
import { pushOutcomes } from '../domain/activity/push-outcomes.ts'

/**
 * What reacts to the hot paths' outcomes (ports/listeners.ts), in the order they run. A new
 * reaction is one file (its failure contract in its comment) and one line here; the paths that
 * produce the outcomes do not change.
 */
export function rootListeners(deps: PlatformDeps): Listeners {
  return {
    // every write to the contact store, whoever made it (domain/contacts/write-seam.ts)
    contactWritten: [changeFeed(deps)],
    // every contact-batches message the worker finished (services/upsert-worker/src/handle-batch.ts)
    batchApplied: [batchLines(deps), deadLetterCounts(deps), pushOutcomes(deps)],
  }
}
