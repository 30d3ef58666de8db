import type { PlatformDeps } from '@lsv/shared/platform/deps.ts'
import type { Background } from '@lsv/shared/platform/serve.ts'
import { createVisitMessageHandler } from '@lsv/shared/domain/visits/consume.ts'
import { createDeliveryTaskHandler } from '@lsv/shared/domain/webhooks/deliver.ts'

/** In-flight visit events per instance: each fans out to a few store reads and writes. */
const VISIT_MAX_IN_FLIGHT = 32

/**
 * What the dispatcher runs besides its HTTP app: the visit-events pull subscription and the
 * task runner (the embedded scheduler calls the delivery handler in process; with Cloud Tasks
 * `start` is a no-op and deliveries arrive on POST /tasks/deliver). The local stack calls this.
 */
export async function startDispatcherBackground(deps: PlatformDeps): Promise<Background[]> {
  const subscription = await deps.queue.subscribe('visit-events', createVisitMessageHandler(deps), { maxInFlight: VISIT_MAX_IN_FLIGHT })
  const handler = createDeliveryTaskHandler(deps)
  const runner = await deps.tasks.start(async (payload) => {
    await handler(payload)
  })
  return [runner, subscription]
}
