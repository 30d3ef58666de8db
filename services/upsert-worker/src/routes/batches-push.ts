import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/platform/deps.ts'
import { registerPushEndpoint } from '@lsv/shared/ports/queue/push-endpoint.ts'
import { handleBatchMessage } from '../handle-batch.ts'

/**
 * `POST /push/contact-batches`: the Pub/Sub push subscription of contact-batches (production),
 * the same handler as the pull path. The OIDC token is checked when PUSH_AUDIENCE is set.
 */
export function registerBatchPushRoutes(app: App, deps: PlatformDeps): void {
  registerPushEndpoint(app, '/push/contact-batches', (message) => handleBatchMessage(deps, message), {
    audience: deps.config.pushAudience,
    ...(deps.config.tasksServiceAccount ? { serviceAccountEmail: deps.config.tasksServiceAccount } : {}),
  })
}
