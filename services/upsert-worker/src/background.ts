import type { PlatformDeps } from '@lsv/shared/platform/deps.ts'
import { handleBatchMessage } from './handle-batch.ts'

/**
 * Batches in flight per instance. A batch holds its raw bytes, the parsed records and the merged
 * documents at once (about 3x its size): 4 x 8 MiB stays well inside a 512 MiB instance.
 */
export const BATCH_MAX_IN_FLIGHT = 4

/**
 * The pull subscription of `contact-batches` (the embedded queue locally; a Pub/Sub pull
 * subscription when configured). In production Pub/Sub pushes to POST /pubsub/contact-batches
 * instead and this is not started.
 */
export async function startUpsertWorkerBackground(deps: PlatformDeps): Promise<{ close(): Promise<void> }> {
  return deps.queue.subscribe('contact-batches', (message) => handleBatchMessage(deps, message), { maxInFlight: BATCH_MAX_IN_FLIGHT })
}
