import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { registerPushEndpoint } from '@lsv/shared/http/pubsub-push.ts'
import { pushCallers } from '@lsv/shared/http/internal-callers.ts'
import { createVisitMessageHandler } from '@lsv/shared/domain/visits/consume.ts'

/**
 * `POST /pubsub/visit-events`: the Pub/Sub push subscription of visit-events (production), the
 * same handler as the pull path. Only Pub/Sub's push identity may call it (PUSH_AUDIENCE,
 * PUSH_SERVICE_ACCOUNT), or loopback callers in local development.
 */
export function registerVisitPushRoutes(app: App, deps: PlatformDeps): void {
  registerPushEndpoint(app, '/pubsub/visit-events', createVisitMessageHandler(deps), { callers: pushCallers(deps.config) })
}
