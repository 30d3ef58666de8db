/** What the reliability suites send: the tenant they set up, management calls, valid inbound records. */
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { TenantSpec } from '../../helpers/tenant.ts'

/** What `app.inject` needs from a fastify app (kept structural so no service import is required here). */
export interface Injectable {
  inject(opts: {
    method: string
    url: string
    headers?: Record<string, string>
    payload?: unknown
  }): Promise<{ statusCode: number; headers: Record<string, unknown>; body: string; json(): any }>
  close(): Promise<unknown>
}

/**
 * The reliability suites' tenant (test/helpers/tenant.ts, through the management API the way the
 * portal and the CLI set one up): the default parts, its main key with contacts:write and
 * contacts:links:write.
 */
export const RELIABILITY_TENANT: TenantSpec = { api: { key: { scopes: ['contacts:write', 'contacts:links:write'] } } }

/** Management API call helper for tests that rotate or revoke. */
export function adminCaller(portal: Injectable, deps: PlatformDeps) {
  const op = { authorization: `Bearer ${deps.config.operatorToken}`, 'content-type': 'application/json' }
  return async (method: string, url: string, payload?: unknown) => {
    const res = await portal.inject({ method, url, headers: op, ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }) })
    return { status: res.statusCode, body: res.body ? res.json() : null }
  }
}

/** A valid inbound contact record (contract 2.5) with a unique external id. */
export function contactRecord(i: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { external_id: `ext-${i}`, email: `person${i}@example.com`, first_name: `First${i}`, last_name: `Last${i}`, ...extra }
}
