import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { registerSchemaRoutes } from './schema.ts'
import { registerAdminRoutes } from './admin/index.ts'
import { registerLinkRoutes } from './links.ts'
import { registerContactReadRoutes } from './contacts-read.ts'
import { registerFallbackRoutes } from './fallbacks.ts'
import { registerPortalAccessAdminRoutes } from './admin/portal-access.ts'
import { registerAuditLogAdminRoutes } from './admin/audit-log.ts'
import { registerPortalPages } from './portal/index.ts'

/**
 * Every portal route, in one list: the OpenAPI generator registers the same list (with the
 * edge routes) to describe the whole interface.
 */
export function registerPortalRoutes(app: App, deps: PlatformDeps): void {
  registerSchemaRoutes(app, deps)
  registerAdminRoutes(app, deps)
  // after registerAdminRoutes: its onRoute hook puts the operator check on every admin route
  registerPortalAccessAdminRoutes(app, deps)
  registerAuditLogAdminRoutes(app, deps)
  registerLinkRoutes(app, deps)
  registerContactReadRoutes(app, deps)
  registerFallbackRoutes(app, deps)
  registerPortalPages(app, deps)
}
