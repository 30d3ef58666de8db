import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { registerPushEndpoint } from '@lsv/shared/http/pubsub-push.ts'
import { pushCallers } from '@lsv/shared/http/internal-callers.ts'
import { createDeadLetterHandler } from '@lsv/shared/domain/operations/dead-letter.ts'
import { deadLetterPushPath, TOPICS } from '@lsv/shared/model/topics.ts'

/**
 * `POST /pubsub/<topic>-dead-letter`, one per topic: the push subscriptions
 * `<topic>-dead-letter-alerts` (infra/pubsub.tf) of the dead-letter topics, in production and
 * start:cloud. Each dead letter becomes one `batch.dead_lettered` to the operator
 * (domain/operations/dead-letter.ts); locally the same handler pulls (background.ts). Only
 * Pub/Sub's push identity may call them, as /pubsub/visit-events. The handler reads attributes
 * only, so the body's `message.data` is never held or decoded (withoutData).
 */
export function registerDeadLetterPushRoutes(app: App, deps: PlatformDeps): void {
  for (const topic of TOPICS) {
    registerPushEndpoint(app, deadLetterPushPath(topic), createDeadLetterHandler(deps, topic), {
      callers: pushCallers(deps.config),
      // a dead letter carries the whole failed message (up to ~13 MB of base64): only its attributes are read
      withoutData: true,
    })
  }
}
