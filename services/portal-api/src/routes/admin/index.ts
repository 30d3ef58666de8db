import type { onRequestHookHandler } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/platform/deps.ts'
import { authenticateOperator } from '@lsv/shared/domain/auth/api-keys.ts'
import { registerAccountRoutes } from './accounts.ts'
import { registerConnectionRoutes } from './connections.ts'
import { registerKeyRoutes } from './keys.ts'
import { registerLocationRoutes } from './locations.ts'
import { registerDomainRoutes } from './domains.ts'
import { registerCustomFieldRoutes } from './custom-fields.ts'
import { registerIntegrationRoutes } from './integrations.ts'
import { registerDeliveryAdminRoutes } from './deliveries.ts'
import { registerVisitAdminRoutes } from './visits.ts'

export const ADMIN_PREFIX = '/api/v1/admin/'

/**
 * The management API (management-api.md, docs/management-api.md). Every route under
 * `/api/v1/admin/` gets the operator check as an `onRequest` hook, attached here in one place so
 * no route can be added without it, and so it runs before the body is parsed and validated:
 * a caller without the operator token learns nothing about what a valid body looks like (401
 * before 400).
 */
export function registerAdminRoutes(app: App, deps: PlatformDeps): void {
  const operatorOnly: onRequestHookHandler = async (request) => {
    await authenticateOperator(deps, request.headers.authorization)
  }
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith(ADMIN_PREFIX)) return
    const existing = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]
    route.onRequest = [operatorOnly, ...existing] as never
  })
  registerAccountRoutes(app, deps)
  registerConnectionRoutes(app, deps)
  registerKeyRoutes(app, deps)
  registerLocationRoutes(app, deps)
  registerDomainRoutes(app, deps)
  registerCustomFieldRoutes(app, deps)
  registerIntegrationRoutes(app, deps)
  registerDeliveryAdminRoutes(app, deps)
  registerVisitAdminRoutes(app, deps)
}
