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

function setCookie(portalBaseUrl: string, value: string, maxAgeSeconds: number): string {
  return stringifySetCookie({
    name: sessionCookieName(portalBaseUrl),
    value,
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: isHttpsOrigin(portalBaseUrl),
    maxAge: maxAgeSeconds,
  })
}

/** `Set-Cookie` that starts a session. */
export function sessionSetCookie(portalBaseUrl: string, value: string): string {
  return setCookie(portalBaseUrl, value, SESSION_ABSOLUTE_MS / 1000)
}

/** `Set-Cookie` that removes the session cookie (sign-out, or a session found ended). */
export function clearedSessionCookie(portalBaseUrl: string): string {
  return setCookie(portalBaseUrl, '', 0)
}
