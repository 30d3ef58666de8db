import { buildBaseApp, type App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/platform/deps.ts'
import { registerPortalRoutes } from './routes/index.ts'

/** The portal origin: contract schema, OpenAPI, management API, link minting, read contract, fallbacks. */
export async function buildApp(deps: PlatformDeps): Promise<App> {
  const app = buildBaseApp({ logger: deps.logger, bodyLimit: 8 * 1024 * 1024, gcpProject: deps.config.gcpProject, trustedProxyHops: deps.config.trustedProxyHops })
  registerPortalRoutes(app, deps)
  return app
}
