import type { FastifyRequest, onRequestHookHandler, preParsingHookHandler } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { authenticateOperator } from '@lsv/shared/domain/auth/authenticate-api-key.ts'
import { registerAccountRoutes } from './accounts.ts'
import { registerConnectionRoutes } from './connections.ts'
import { registerKeyRoutes } from './keys.ts'
import { registerLocationRoutes } from './locations.ts'
import { registerDomainRoutes } from './domains.ts'
import { registerCustomFieldRoutes } from './custom-fields.ts'
import { registerIntegrationRoutes } from './integrations.ts'
import { registerDeliveryAdminRoutes } from './deliveries.ts'
import { registerIntegrationActionRoutes } from './integration-actions.ts'
import { registerVisitAdminRoutes } from './visits.ts'

const ADMIN_PREFIX = '/api/v1/admin/'

/** a route's hooks of one kind (none, one, or a list) with `hook` added first or last */
function withHook<H>(existing: H | readonly H[] | undefined, hook: H, position: 'first' | 'last'): H[] {
  const list: readonly H[] = existing === undefined ? [] : isList(existing) ? existing : [existing]
  return position === 'first' ? [hook, ...list] : [...list, hook]
}
const isList = <H>(hooks: H | readonly H[]): hooks is readonly H[] => Array.isArray(hooks)

/** True when the route takes no body or a body whose members are all optional. */
function bodyIsOptional(schema: unknown): boolean {
  const body = (schema as { body?: { required?: unknown } } | undefined)?.body
  return body === undefined || !Array.isArray(body.required) || body.required.length === 0
}

/**
 * Many HTTP clients send `Content-Type: application/json` on every request, also on a DELETE or a
 * rotation without a body. Where the body is optional, an empty body is no body (instead of 400
 * `invalid JSON body`), and is then validated as `{}`.
 */
const emptyBodyIsNoBody: preParsingHookHandler = async (request, _reply, payload) => {
  const length = request.headers['content-length']
  if (request.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) {
    delete request.headers['content-type']
  }
  return payload
}
const noBodyAsEmptyObject = async (request: FastifyRequest): Promise<void> => {
  if (request.body === undefined || request.body === null) request.body = {}
}

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
    route.onRequest = withHook(route.onRequest, operatorOnly, 'first')
    if (bodyIsOptional(route.schema)) {
      route.preParsing = withHook(route.preParsing, emptyBodyIsNoBody, 'last')
      if (route.schema?.body !== undefined) {
        route.preValidation = withHook(route.preValidation, noBodyAsEmptyObject, 'first')
      }
    }
  })
  registerAccountRoutes(app, deps)
  registerConnectionRoutes(app, deps)
  registerKeyRoutes(app, deps)
  registerLocationRoutes(app, deps)
  registerDomainRoutes(app, deps)
  registerCustomFieldRoutes(app, deps)
  registerIntegrationRoutes(app, deps)
  registerDeliveryAdminRoutes(app, deps)
  registerIntegrationActionRoutes(app, deps)
  registerVisitAdminRoutes(app, deps)
}
