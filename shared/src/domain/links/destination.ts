import { AppError } from '../../errors/app-error.ts'

/**
 * The destination of a minted link (contract 4.2): an absolute http(s) URL whose host is an
 * authorized domain of the tenant or a subdomain of one. docs/links.md lists every rule and
 * which of the two 400 texts each failure answers:
 *
 * - `invalid destination URL`: anything that is not a plain absolute http(s) URL. This includes
 *   inputs WHATWG would "repair" into a URL other parsers read differently (backslashes,
 *   whitespace or control characters, a scheme not followed by exactly `//<host>`, percent-escapes
 *   in the host) and userinfo, so that the host we check is the host every client will visit.
 *   The returned `link` is serialized from the parsed URL, never copied from the input.
 * - `destination host is not authorized`: a well-formed URL whose host is not on the list (IP
 *   literals, trailing-dot hosts, suffix look-alikes, punycode look-alikes all land here).
 */

/** backslash, any whitespace (ASCII or Unicode), C0 controls and DEL */
const FORBIDDEN_CHARACTERS = /[\\\s\u0000-\u001f\u007f]/u
const ABSOLUTE_HTTP = /^https?:\/\//i
/** dot-separated labels of letters, digits, `-`, `_`; one trailing dot allowed here (refused as unauthorized) */
const DNS_HOSTNAME = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/

/** Parses `raw` strictly; throws AppError('invalid_destination_url'). */
export function parseDestinationUrl(raw: string): URL {
  if (FORBIDDEN_CHARACTERS.test(raw) || !ABSOLUTE_HTTP.test(raw)) throw new AppError('invalid_destination_url')
  let url: URL
  try {
    url = new URL(raw)
  } catch (cause) {
    throw new AppError('invalid_destination_url', { cause })
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new AppError('invalid_destination_url')
  // Userinfo, even empty (`https://@host`): WHATWG drops an empty one silently, other parsers
  // do not. The authority is what lies between `//` and the first `/`, `?` or `#` (backslashes
  // are already refused, so no parser sees another end of the authority).
  const authority = raw.slice(raw.indexOf('//') + 2).split(/[/?#]/, 1)[0]!
  if (authority === '' || authority.includes('@') || url.username !== '' || url.password !== '') throw new AppError('invalid_destination_url')
  // Percent-escapes in the host (`ex%61mple.com`, `example.com%2eevil.com`) are decoded by
  // WHATWG but not by every client: refuse them.
  if (authority.includes('%')) throw new AppError('invalid_destination_url')
  // WHATWG lets through host characters DNS names never hold (`;`, `&`, `!`, …), which other
  // parsers treat as delimiters: only letters, digits, `-` and `_` labels (IDN already punycode).
  if (!isIpLiteral(url.hostname) && !DNS_HOSTNAME.test(url.hostname)) throw new AppError('invalid_destination_url')
  return url
}

/** IPv6 literals keep their brackets in `hostname`; WHATWG rewrites every IPv4 form to dotted decimal. */
export function isIpLiteral(hostname: string): boolean {
  return hostname.startsWith('[') || /^\d{1,3}(\.\d{1,3}){3}$/.test(hostname)
}

/**
 * An authorized domain as WHATWG would spell it as a host (lower case, IDN as punycode), or null
 * when the entry cannot authorize anything: empty, not a host, an IP literal, or a single label
 * (`com`, `localhost`), which would authorize every host under it.
 */
export function normalizeAuthorizedDomain(domain: string): string | null {
  let d = domain.trim().toLowerCase()
  if (d.startsWith('*.')) d = d.slice(2)
  if (d.endsWith('.')) d = d.slice(0, -1)
  if (d === '' || /[\s/\\?#@:[\]%]/u.test(d)) return null
  let hostname: string
  try {
    hostname = new URL(`http://${d}`).hostname
  } catch {
    return null
  }
  if (hostname === '' || hostname.endsWith('.') || isIpLiteral(hostname) || !hostname.includes('.')) return null
  return hostname
}

/** True when `hostname` (as WHATWG serializes it) equals an authorized domain or is a subdomain of one. */
export function isAuthorizedHost(hostname: string, authorizedDomains: readonly string[]): boolean {
  // A trailing dot names the same DNS host but would slip past suffix comparison elsewhere
  // (cookies, CSP): refuse rather than normalize.
  if (hostname === '' || hostname.endsWith('.') || isIpLiteral(hostname)) return false
  for (const entry of authorizedDomains) {
    const domain = normalizeAuthorizedDomain(entry)
    if (domain === null) continue
    // the dot makes `evil-example.com` and `notexample.com` fail for `example.com`
    if (hostname === domain || hostname.endsWith(`.${domain}`)) return true
  }
  return false
}

/** Parses and authorizes a destination; throws the matching 400 AppError. */
export function checkDestination(raw: string, authorizedDomains: readonly string[]): URL {
  const url = parseDestinationUrl(raw)
  if (!isAuthorizedHost(url.hostname, authorizedDomains)) throw new AppError('destination_not_authorized')
  return url
}
