import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { registerPushEndpoint } from '@lsv/shared/http/pubsub-push.ts'
import { pushCallers } from '@lsv/shared/http/internal-callers.ts'
import { createVisitMessageHandler } from '@lsv/shared/domain/visits/consume.ts'
import type { DeliverySweeper } from '@lsv/shared/domain/webhooks/sweep.ts'

/**
 * `POST /pubsub/visit-events`: the Pub/Sub push subscription of visit-events (production), the
 * same handler as the pull path. Only Pub/Sub's push identity may call it (PUSH_AUDIENCE,
 * PUSH_SERVICE_ACCOUNT), or loopback callers in local development. After the event, the
 * stranded-delivery sweep runs when it is due (at most every 5 min per instance; it never fails
 * the push).
 */
export function registerVisitPushRoutes(app: App, deps: PlatformDeps, sweeper: DeliverySweeper): void {
  const handle = createVisitMessageHandler(deps)
  registerPushEndpoint(
    app,
    '/pubsub/visit-events',
    async (message) => {
      const result = await handle(message)
      await sweeper.maybeRun()
      return result
    },
    { callers: pushCallers(deps.config) },
  )
}
