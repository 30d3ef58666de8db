import type { PortalDeps } from './deps.ts'
import { sessionCookieOf } from './cookie.ts'
import { resolvePortalSession, type PortalSession } from './sessions.ts'

type Headers = Record<string, string | string[] | undefined>

/** What the credential step sees of a request (a fastify request fits). */
export interface PortalRequest {
  method: string
  headers: Headers
}

/** Methods that only read: the same-origin rule does not apply to them. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * Contract section 5 rule 2 and "Portal access" rule 6: a present key always decides. Presence
 * is the header itself, whatever its value: a blank or malformed key answers 401 as a key and
 * never falls back to the cookie.
 */
export function presentsApiKey(headers: Headers): boolean {
  return headers.authorization !== undefined || headers['x-api-key'] !== undefined
}

/**
 * Rule 5: a state-changing request counts as the session's only when it is same-origin: its
 * `Origin` is the portal's origin, or the browser says `Sec-Fetch-Site: same-origin`. Browsers
 * set both on a cross-site form post and neither can be set by a page's script, so a page on
 * another site cannot act with the tenant's cookie.
 */
export function isSameOrigin(portalBaseUrl: string, headers: Headers): boolean {
  const origin = headers.origin
  if (typeof origin === 'string' && origin === new URL(portalBaseUrl).origin) return true
  return headers['sec-fetch-site'] === 'same-origin'
}

/**
 * The portal session as a credential ("the same-origin portal session" of contract 4.2 and 4.6
 * rule 1): the signed-in account, or null when the session does not count — an API key is
 * present (it decides instead), there is no live session cookie, or the request changes state
 * and is not same-origin. Callers treat null as "no session" and go on to the key check, which
 * answers 401 `unauthorized` when there is no key either. The edge host never calls this.
 */
export async function portalSessionOf(deps: PortalDeps, request: PortalRequest): Promise<PortalSession | null> {
  if (presentsApiKey(request.headers)) return null
  const secret = sessionCookieOf(deps.config.portalBaseUrl, request.headers.cookie)
  if (secret === null) return null
  if (!SAFE_METHODS.has(request.method.toUpperCase()) && !isSameOrigin(deps.config.portalBaseUrl, request.headers)) return null
  return resolvePortalSession(deps, secret)
}
