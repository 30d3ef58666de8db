import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/platform/deps.ts'
import { pushOptionsFromConfig, registerPushEndpoint } from '@lsv/shared/ports/queue/push-endpoint.ts'
import { handleBatchMessage } from '../handle-batch.ts'

/** the push endpoint infra/pubsub.tf points the contact-batches subscription at */
export const BATCH_PUSH_PATH = '/pubsub/contact-batches'

/**
 * `POST /pubsub/contact-batches`: the Pub/Sub push subscription of contact-batches (production),
 * the same handler as the pull path. The OIDC token is checked when PUSH_AUDIENCE is set.
 */
export function registerBatchPushRoutes(app: App, deps: PlatformDeps): void {
  registerPushEndpoint(app, BATCH_PUSH_PATH, (message) => handleBatchMessage(deps, message), pushOptionsFromConfig(deps.config))
}
