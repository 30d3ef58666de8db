import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { BackgroundPlan } from '@lsv/shared/platform/background.ts'
import type { Background } from '@lsv/shared/platform/background.ts'
import { handleBatchMessage } from './handle-batch.ts'

/**
 * Batches in flight per instance. A batch holds its raw bytes, the parsed records and the merged
 * documents at once (about 3x its size): 4 x 8 MiB stays well inside a 512 MiB instance.
 */
const BATCH_MAX_IN_FLIGHT = 4

/** The pull consumer of `contact-batches` on whatever queue deps hold. */
export async function startUpsertWorkerBackground(deps: PlatformDeps): Promise<Background> {
  return deps.queue.subscribe('contact-batches', (message) => handleBatchMessage(deps, message), { maxInFlight: BATCH_MAX_IN_FLIGHT })
}

/**
 * What the worker runs besides its HTTP app, as backgroundFor() plans it: the pull consumer
 * (embedded queue, local stack). With Pub/Sub push, batches arrive on POST /pubsub/contact-batches.
 */
export async function background(deps: PlatformDeps, plan: BackgroundPlan): Promise<Background[]> {
  return plan.pull.includes('contact-batches') ? [await startUpsertWorkerBackground(deps)] : []
}
