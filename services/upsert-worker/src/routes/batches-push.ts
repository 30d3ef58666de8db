import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { registerPushEndpoint } from '@lsv/shared/http/pubsub-push.ts'
import { pushCallers } from '@lsv/shared/http/internal-callers.ts'
import { handleBatchMessage } from '../handle-batch.ts'

/** the push endpoint infra/pubsub.tf points the contact-batches subscription at */
const BATCH_PUSH_PATH = '/pubsub/contact-batches'

/**
 * `POST /pubsub/contact-batches`: the Pub/Sub push subscription of contact-batches (production),
 * the same handler as the pull path. Only Pub/Sub's push identity may call it (PUSH_AUDIENCE,
 * PUSH_SERVICE_ACCOUNT), or loopback callers in local development.
 */
export function registerBatchPushRoutes(app: App, deps: PlatformDeps): void {
  registerPushEndpoint(app, BATCH_PUSH_PATH, (message) => handleBatchMessage(deps, message), { callers: pushCallers(deps.config) })
}
