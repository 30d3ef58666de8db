import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { BackgroundPlan } from '@lsv/shared/platform/background.ts'
import type { Background } from '@lsv/shared/platform/background.ts'
import { createVisitMessageHandler } from '@lsv/shared/domain/visits/consume.ts'
import { createDeliveryTaskHandler } from '@lsv/shared/domain/webhooks/deliver.ts'
import { createDeadLetterHandler } from '@lsv/shared/domain/operations/dead-letter.ts'
import { TOPICS } from '@lsv/shared/model/topics.ts'

/** In-flight visit events per instance: each fans out to a few store reads and writes. */
const VISIT_MAX_IN_FLIGHT = 32
/**
 * In-flight dead letters per topic: each is one delivery write and one task. A flood of dead
 * letters is taken a few at a time; their POSTs then go at the operator queue's rate.
 */
const DEAD_LETTER_MAX_IN_FLIGHT = 4

/**
 * What the dispatcher runs besides its HTTP app, as backgroundFor() plans it: the visit-events
 * pull consumer (embedded queue, local stack; with Pub/Sub push, visits arrive on
 * POST /pubsub/visit-events) with the dead letters' alerts consumers (pushed to
 * POST /pubsub/<topic>-dead-letter otherwise), and the embedded task runner (with Cloud Tasks, deliveries arrive on
 * POST /tasks/deliver).
 */
export async function background(deps: PlatformDeps, plan: BackgroundPlan): Promise<Background[]> {
  const started: Background[] = []
  if (plan.taskRunner) {
    const handler = createDeliveryTaskHandler(deps)
    started.push(
      await deps.tasks.start(async (payload) => {
        await handler(payload)
      }),
    )
  }
  if (plan.pull.includes('visit-events')) {
    started.push(await deps.queue.subscribe('visit-events', createVisitMessageHandler(deps), { maxInFlight: VISIT_MAX_IN_FLIGHT }))
  }
  // nobody pushes to a process that pulls (the same condition as for visit-events): it reads the
  // dead letters' alerts subscriptions too, and tells the operator (`batch.dead_lettered`)
  if (plan.pull.length > 0) {
    for (const topic of TOPICS) {
      started.push(await deps.queue.subscribeDeadLetters(topic, createDeadLetterHandler(deps, topic), { maxInFlight: DEAD_LETTER_MAX_IN_FLIGHT }))
    }
  }
  return started
}
