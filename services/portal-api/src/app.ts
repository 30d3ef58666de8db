import { buildBaseApp, type App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { BuildOptions } from '@lsv/shared/platform/serve.ts'
import { serviceReadiness } from '@lsv/shared/http/readiness.ts'
import { registerPortalRoutes } from './routes/index.ts'
import { registerApiReference } from './routes/api-reference.ts'

/** The portal origin: contract schema, OpenAPI and its reference page, management API, link minting, read contract, fallbacks. */
export async function buildApp(deps: PlatformDeps, options: BuildOptions = {}): Promise<App> {
  const app = buildBaseApp({
    logger: deps.logger,
    bodyLimit: 8 * 1024 * 1024,
    gcpProject: deps.config.gcpProject,
    trustedProxyHops: deps.config.trustedProxyHops,
    readiness: serviceReadiness(deps, ['tenants', 'contacts', 'queue']),
  })
  await options.beforeRoutes?.(app)
  registerPortalRoutes(app, deps)
  // the API reference page (GET /docs); not an operation of the OpenAPI document it renders
  registerApiReference(app)
  return app
}
