import { parseCookie, stringifySetCookie } from 'cookie'
import { SESSION_ABSOLUTE_MS } from '../../model/portal-lifetimes.ts'

/**
 * The session cookie (management-api.md, "Portal access", rule 1): `HttpOnly`, `SameSite=Lax`,
 * `Path=/`, `Secure` whenever the portal origin is https; its value is the opaque session secret.
 *
 * - Lax, not Strict: a tenant opens `links.portal` (rule 7) from an email or another site, and the
 *   sign-in link itself is followed from one; Strict would send no cookie on that top-level
 *   navigation (nor along the sign-in redirect it starts), so the tenant would look signed out.
 *   Lax still keeps the cookie off cross-site POSTs, and rule 5 refuses cross-origin ones anyway.
 * - On https the name carries the `__Host-` prefix: browsers then accept the cookie only with
 *   `Secure`, `Path=/` and no `Domain`, so a sibling subdomain (a tenant's edge host, say) cannot
 *   plant or shadow it. Browsers refuse that prefix without `Secure`, so on http the plain name.
 * - `Max-Age` is the session's absolute lifetime; the server enforces both lifetimes regardless.
 * - An account that lets other sites frame its portal (`portal_frame_ancestors`, docs/portal.md,
 *   "Embedding") gets `SameSite=None; Secure; Partitioned` instead: inside a SaaS dashboard's
 *   iframe the portal is a third-party context, where a Lax cookie is never sent. `Partitioned`
 *   (CHIPS) keys the cookie to the embedding site, so browsers that block unpartitioned
 *   third-party cookies still keep it, and a session started inside one dashboard's frame is not
 *   the tenant's session anywhere else. The cost: the cookie now rides on cross-site requests,
 *   so rule 5 (same-origin `Origin`/`Sec-Fetch-Site` for every state change) is the only CSRF
 *   guard left for those accounts — it is checked before the cookie is read, for every form.
 *   `Secure` is set even on an http portal (browsers refuse `SameSite=None` without it; they
 *   accept `Secure` from http only on loopback, so over plain http embedding works locally only).
 */
const COOKIE_NAME = 'lsv_portal'

function isHttpsOrigin(portalBaseUrl: string): boolean {
  return new URL(portalBaseUrl).protocol === 'https:'
}

function sessionCookieName(portalBaseUrl: string): string {
  return isHttpsOrigin(portalBaseUrl) ? `__Host-${COOKIE_NAME}` : COOKIE_NAME
}

/** The session cookie's value in a `Cookie` header, if any. */
export function sessionCookieOf(portalBaseUrl: string, cookieHeader: string | string[] | undefined): string | null {
  if (typeof cookieHeader !== 'string' || cookieHeader === '') return null
  return parseCookie(cookieHeader)[sessionCookieName(portalBaseUrl)] ?? null
}

function setCookie(portalBaseUrl: string, value: string, maxAgeSeconds: number, embeddable: boolean): string {
  return stringifySetCookie({
    name: sessionCookieName(portalBaseUrl),
    value,
    httpOnly: true,
    sameSite: embeddable ? 'none' : 'lax',
    path: '/',
    secure: embeddable || isHttpsOrigin(portalBaseUrl),
    ...(embeddable ? { partitioned: true } : {}),
    maxAge: maxAgeSeconds,
  })
}

/** `Set-Cookie` that starts a session; `embeddable`: the account has a frame-ancestors allow-list. */
export function sessionSetCookie(portalBaseUrl: string, value: string, embeddable = false): string {
  return setCookie(portalBaseUrl, value, SESSION_ABSOLUTE_MS / 1000, embeddable)
}

/**
 * `Set-Cookie` that removes the session cookie (sign-out, or a session found ended). A
 * partitioned cookie is removed only by a partitioned `Set-Cookie`, so sign-out passes
 * `embeddable` as sign-in did; a leftover cookie would name an ended session anyway.
 */
export function clearedSessionCookie(portalBaseUrl: string, embeddable = false): string {
  return setCookie(portalBaseUrl, '', 0, embeddable)
}
