import { parseCookie, stringifySetCookie } from 'cookie'

/**
 * Coming back (issue 22, job 9): a signed-out GET of a portal screen (a contact's `links.portal`,
 * a bookmark) remembers where it was going in a short-lived cookie; the next sign-in in this
 * browser lands there instead of the portal home (management-api.md, "Portal access", rule 1:
 * "a redirect (303) to a portal page").
 *
 * The remembered value is followed as a `Location`, so it is an open redirect unless checked:
 * only a same-origin path under `/portal/` or `/contacts/` (a contact's `links.portal`) is ever kept or followed (`safeReturnPath`), checked
 * both when it is written and when it is read (a cookie is client input like any other).
 */

const COOKIE_NAME = 'lsv_portal_next'
/** As long as a sign-in link lives by default (900 s): the tenant asks the operator for one. */
const MAX_AGE_SECONDS = 15 * 60
/** Longer paths are not remembered (a URL that long is not a portal page's). */
const MAX_LENGTH = 2048
/** the portal's pages, and a contact's page at the contract's `links.portal` URL (`/contacts/{id}`) */
const PREFIXES = ['/portal/', '/contacts/'] as const
const isPortalPath = (path: string) => PREFIXES.some((p) => path.startsWith(p))

/**
 * The path itself when it is a same-origin path under `/portal/` or `/contacts/`, else null. Refused: anything not
 * starting with `/portal/` (so `//evil.example`, `/\evil`, `https://…`, `javascript:`), a
 * backslash or a control character or space anywhere (browsers read `\` as `/`), and a value
 * that, resolved against an origin, leaves it or the `/portal/` tree (`/portal/../x`, or encoded
 * dots, which URL parsing normalizes). Percent-encoded slashes stay encoded inside one path segment,
 * so `/portal/%2F%2Fevil.example` is a (missing) portal page, never another host.
 */
export function safeReturnPath(value: string | null | undefined): string | null {
  if (typeof value !== 'string' || value.length > MAX_LENGTH || !isPortalPath(value)) return null
  if (/[\\\s]/.test(value) || [...value].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f)) return null
  const probe = 'http://portal.invalid'
  let url: URL
  try {
    url = new URL(value, probe)
  } catch {
    return null
  }
  if (url.origin !== probe || !isPortalPath(url.pathname) || url.hash !== '') return null
  const normalized = url.pathname + url.search
  return normalized === value ? value : null
}

function isHttps(portalBaseUrl: string): boolean {
  return new URL(portalBaseUrl).protocol === 'https:'
}

/** `__Host-` on https, as the session cookie (shared/src/domain/portal/cookie.ts), for the same reason. */
function cookieName(portalBaseUrl: string): string {
  return isHttps(portalBaseUrl) ? `__Host-${COOKIE_NAME}` : COOKIE_NAME
}

function setCookie(portalBaseUrl: string, value: string, maxAge: number): string {
  // Lax: a deep link is opened from an email or another site (a top-level GET), like the session
  return stringifySetCookie({ name: cookieName(portalBaseUrl), value, httpOnly: true, sameSite: 'lax', path: '/', secure: isHttps(portalBaseUrl), maxAge })
}

/** `Set-Cookie` that remembers `path`, or null when the path is not one to follow. */
export function rememberReturnPath(portalBaseUrl: string, path: string): string | null {
  const safe = safeReturnPath(path)
  return safe === null ? null : setCookie(portalBaseUrl, safe, MAX_AGE_SECONDS)
}

/** `Set-Cookie` that forgets it (once a sign-in used it). */
export function forgetReturnPath(portalBaseUrl: string): string {
  return setCookie(portalBaseUrl, '', 0)
}

/** The remembered path in a `Cookie` header, checked again; null when absent or not safe. */
export function returnPathOf(portalBaseUrl: string, cookieHeader: string | string[] | undefined): string | null {
  if (typeof cookieHeader !== 'string' || cookieHeader === '') return null
  return safeReturnPath(parseCookie(cookieHeader)[cookieName(portalBaseUrl)])
}
