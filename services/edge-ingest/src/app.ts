import { buildBaseApp, type App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { BuildOptions } from '@lsv/shared/platform/serve.ts'
import { serviceReadiness } from '@lsv/shared/http/readiness.ts'
import { registerPushRoutes, type PushRouteOptions } from './routes/push.ts'

/** The edge host: `<public_id>.<edge domain>`. Builds the app; never listens (server.ts does). */
export async function buildApp(deps: PlatformDeps, options: BuildOptions & PushRouteOptions = {}): Promise<App> {
  const app = buildBaseApp({
    logger: deps.logger,
    bodyLimit: 8 * 1024 * 1024,
    gcpProject: deps.config.gcpProject,
    trustedProxyHops: deps.config.trustedProxyHops,
    readiness: serviceReadiness(deps, ['tenants', 'queue']),
  })
  await options.beforeRoutes?.(app)
  registerPushRoutes(app, deps, options)
  return app
}
