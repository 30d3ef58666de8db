import { buildBaseApp, type App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { BuildOptions } from '@lsv/shared/platform/serve.ts'
import { serviceReadiness } from '@lsv/shared/http/readiness.ts'
import { registerBatchPushRoutes } from './routes/batches-push.ts'

/** Upsert worker: Pub/Sub push endpoint for contact batches (production); health. */
export async function buildApp(deps: PlatformDeps, options: BuildOptions = {}): Promise<App> {
  const app = buildBaseApp({
    logger: deps.logger,
    bodyLimit: 12 * 1024 * 1024,
    gcpProject: deps.config.gcpProject,
    readiness: serviceReadiness(deps, ['tenants', 'contacts', 'queue']),
  })
  await options.beforeRoutes?.(app)
  registerBatchPushRoutes(app, deps)
  return app
}
