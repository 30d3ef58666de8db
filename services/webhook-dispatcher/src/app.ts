import { buildBaseApp, type App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { BuildOptions } from '@lsv/shared/platform/serve.ts'
import { serviceReadiness } from '@lsv/shared/http/readiness.ts'
import { registerTaskRoutes } from './routes/tasks.ts'
import { registerVisitPushRoutes } from './routes/visits-push.ts'
import { registerDeadLetterPushRoutes } from './routes/dead-letters-push.ts'
import { createDeliverySweeper } from '@lsv/shared/domain/webhooks/sweep.ts'

/**
 * Webhook dispatcher: Pub/Sub push endpoints for visit events and for the dead letters (the
 * operator's `batch.dead_lettered`), and the Cloud Tasks delivery endpoint.
 * Both run the instance's stranded-delivery sweeper when it is due (one per app).
 */
export async function buildApp(deps: PlatformDeps, options: BuildOptions = {}): Promise<App> {
  const app = buildBaseApp({
    logger: deps.logger,
    bodyLimit: 1024 * 1024,
    gcpProject: deps.config.gcpProject,
    readiness: serviceReadiness(deps, ['tenants', 'queue']),
  })
  await options.beforeRoutes?.(app)
  const sweeper = createDeliverySweeper(deps)
  registerTaskRoutes(app, deps, sweeper)
  registerVisitPushRoutes(app, deps, sweeper)
  registerDeadLetterPushRoutes(app, deps)
  return app
}
