import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { randomSuffix } from '../../helpers/embedded.ts'

/** What `app.inject` needs from a fastify app (kept structural so no service import is required here). */
export interface Injectable {
  inject(opts: { method: string; url: string; headers?: Record<string, string>; payload?: unknown }): Promise<{ statusCode: number; headers: Record<string, unknown>; body: string; json(): any }>
  close(): Promise<unknown>
}

export interface Tenant {
  accountId: string
  publicId: string
  /** `<public_id>.<edgeDomain>`: the Host header of edge requests */
  edgeHost: string
  apiConnectionId: string
  keyId: string
  /** scopes contacts:write + contacts:links:write */
  key: string
  webhookConnectionId: string
  sourceToken: string
  partnerConnectionId: string
  locationId: string
  locationToken: string
}

/**
 * Sets a tenant up the way the portal and the CLI do: through the management API (paths fixed by
 * the management API spec), authenticated with the operator token of `deps.config`.
 */
export async function setUpTenant(portal: Injectable, deps: PlatformDeps, options: { publicId?: string; authorizedDomains?: string[] } = {}): Promise<Tenant> {
  const op = { authorization: `Bearer ${deps.config.operatorToken}`, 'content-type': 'application/json' }
  const call = async (method: string, url: string, payload?: unknown) => {
    const res = await portal.inject({ method, url, headers: op, ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }) })
    if (res.statusCode >= 300) throw new Error(`${method} ${url} -> ${res.statusCode} ${res.body}`)
    return res.body ? res.json() : null
  }
  const publicId = options.publicId ?? `rel-${randomSuffix(4)}`
  const account = await call('POST', '/api/v1/admin/accounts', { public_id: publicId, name: 'reliability' })
  const base = `/api/v1/admin/accounts/${account.id}`
  const api = await call('POST', `${base}/connections`, { type: 'api', source: 'crm' })
  const key = await call('POST', `${base}/connections/${api.id}/keys`, { scopes: ['contacts:write', 'contacts:links:write'] })
  const hook = await call('POST', `${base}/connections`, { type: 'webhook', source: 'hooks' })
  const partner = await call('POST', `${base}/connections`, { type: 'partnercrm' })
  const locationId = `loc-${randomSuffix(4)}`
  const location = await call('POST', `${base}/connections/${partner.id}/locations`, { location_id: locationId })
  await call('PUT', `${base}/authorized-domains`, { domains: options.authorizedDomains ?? ['example.com'] })
  return {
    accountId: account.id,
    publicId,
    edgeHost: `${publicId}.${deps.config.edgeDomain}`,
    apiConnectionId: api.id,
    keyId: key.id,
    key: key.key,
    webhookConnectionId: hook.id,
    sourceToken: hook.token,
    partnerConnectionId: partner.id,
    locationId,
    locationToken: location.token,
  }
}

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
