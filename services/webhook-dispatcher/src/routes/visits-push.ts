import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/platform/deps.ts'
import { pushOptionsFromConfig, registerPushEndpoint } from '@lsv/shared/ports/queue/push-endpoint.ts'
import { createVisitMessageHandler } from '@lsv/shared/domain/visits/consume.ts'

/** Pub/Sub push subscription of visit-events (production); the same handler as the pull path. */
export function registerVisitPushRoutes(app: App, deps: PlatformDeps): void {
  registerPushEndpoint(app, '/pubsub/visit-events', createVisitMessageHandler(deps), pushOptionsFromConfig(deps.config))
}
