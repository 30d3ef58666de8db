import { AppError } from '../../errors/app-error.ts'
import { isPublicSuffix } from './public-suffix.ts'

/**
 * The destination of a minted link (contract 4.2): an absolute http(s) URL whose host is an
 * authorized domain of the tenant or a subdomain of one. The contract has two 400 texts and
 * docs/links.md lists which rule answers which:
 *
 * - `invalid destination URL`: only a value that does not parse as a URL (the WHATWG parser,
 *   with no base, refuses it: `example.com`, `//example.com`, `https://`, a bad port).
 * - `destination host is not authorized`: every URL that parses but is refused. Besides hosts
 *   that are simply not on the list (IP literals, trailing-dot hosts, suffix and punycode
 *   look-alikes), a host is only authorized when the text names it unambiguously, so that the
 *   host we check is the host every client will visit: a scheme other than http(s), userinfo
 *   (`https://<authorized>@other.example/`), inputs WHATWG "repairs" into a URL other parsers
 *   read differently (backslashes, whitespace or control characters, a scheme not followed by
 *   exactly `//<host>`, percent-escapes in the host) and host characters DNS names never hold.
 *   The returned `link` is serialized from the parsed URL, never copied from the input.
 */

/** backslash, any whitespace (ASCII or Unicode), C0 controls and DEL */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this pattern refuses
const FORBIDDEN_CHARACTERS = /[\\\s\u0000-\u001f\u007f]/u
const ABSOLUTE_HTTP = /^https?:\/\//i
/** dot-separated labels of letters, digits, `-`, `_`; one trailing dot allowed here (refused as unauthorized) */
const DNS_HOSTNAME = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/

/** Parses `raw` with the WHATWG parser; throws AppError('invalid_destination_url') only when it does not parse. */
export function parseDestinationUrl(raw: string): URL {
  try {
    return new URL(raw)
  } catch (cause) {
    throw new AppError('invalid_destination_url', { cause })
  }
}

/**
 * True when `url` (parsed from `raw`) is a plain http(s) URL whose host every client reads the
 * same way from `raw`; otherwise no host it names can be called authorized.
 */
function namesHostUnambiguously(raw: string, url: URL): boolean {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return false
  if (FORBIDDEN_CHARACTERS.test(raw) || !ABSOLUTE_HTTP.test(raw)) return false
  // Userinfo, even empty (`https://@host`): WHATWG drops an empty one silently, other parsers
  // do not, and `https://<authorized>@other.example/` visits `other.example`. The authority is
  // what lies between `//` and the first `/`, `?` or `#` (backslashes are already refused, so no
  // parser sees another end of the authority).
  const authority = raw.slice(raw.indexOf('//') + 2).split(/[/?#]/, 1)[0]!
  if (authority === '' || authority.includes('@') || url.username !== '' || url.password !== '') return false
  // Percent-escapes in the host (`ex%61mple.com`, `example.com%2eevil.com`) are decoded by
  // WHATWG but not by every client.
  if (authority.includes('%')) return false
  // WHATWG lets through host characters DNS names never hold (`;`, `&`, `!`, …), which other
  // parsers treat as delimiters: only letters, digits, `-` and `_` labels (IDN already punycode).
  return isIpLiteral(url.hostname) || DNS_HOSTNAME.test(url.hostname)
}

/** IPv6 literals keep their brackets in `hostname`; WHATWG rewrites every IPv4 form to dotted decimal. */
function isIpLiteral(hostname: string): boolean {
  return hostname.startsWith('[') || /^\d{1,3}(\.\d{1,3}){3}$/.test(hostname)
}

/**
 * An authorized-domain entry as WHATWG would spell it as a host (lower case, IDN as punycode), or
 * null when it is not a domain name: empty, not a host, an IP literal, or a single label (`com`,
 * `localhost`). Public suffixes are not judged here (see normalizeAuthorizedDomain).
 */
export function hostOfDomainEntry(domain: string): string | null {
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

/**
 * An authorized domain as used for matching, or null when the entry cannot authorize anything:
 * not a domain name (hostOfDomainEntry), or a public suffix (`co.uk`, `github.io`; single labels
 * such as `com` are already refused), which would authorize every host under it. The management
 * API refuses such entries; one stored before that rule existed is ignored here, so it
 * authorizes nothing.
 */
export function normalizeAuthorizedDomain(domain: string): string | null {
  const hostname = hostOfDomainEntry(domain)
  return hostname === null || isPublicSuffix(hostname) ? null : hostname
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
  if (!namesHostUnambiguously(raw, url) || !isAuthorizedHost(url.hostname, authorizedDomains)) throw new AppError('destination_not_authorized')
  return url
}
