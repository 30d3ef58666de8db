/**
 * The one redaction policy: what is secret, for every sink (log lines, span attributes and names,
 * the inbound and delivery debuggers, audit entries, operational events; docs/operations.md,
 * "What never reaches a sink in clear"). Each sink applies it at its single write seam: the
 * logger's options (logging/logger.ts), the span processor (platform/telemetry-redaction.ts), the
 * stores' write boundary (adapters/redacting-stores.ts), the audit recorder
 * (domain/audit/record.ts) and the operational-event emitter (domain/operations/emit.ts).
 *
 * What is secret:
 * - credential headers (contract section 5: `authorization`, `x-api-key`, `x-webhook-token`;
 *   cookies, proxy and Cloud Run's own authorization header);
 * - query parameters credentials are passed under (`token`: a source, location or sign-in link
 *   token; `lsv`: a minted link token, whoever holds it is attributed to that contact);
 * - values carrying one of this system's secrets anywhere: API keys (`lsk_…`), source and
 *   location tokens (`lst_…`), webhook signing secrets (`whsec_…`), the portal session cookie
 *   (`lsv_portal=…`), a reveal page's id (`/portal/reveal/<id>`); and an audit value that is a whole portal
 *   secret (43 base64url characters: a sign-in token or a session secret);
 * - a URL's userinfo (`https://user:password@host`), and all of a receiver's query (a tenant's
 *   endpoint URL often carries its own credential under a name nobody can list).
 */
export const REDACTED = '[redacted]'

const CREDENTIAL_HEADERS = [
  'authorization',
  'proxy-authorization',
  'x-serverless-authorization',
  'x-api-key',
  'x-webhook-token',
  'cookie',
  'set-cookie',
] as const

/** a header or field name whose value is a credential whatever it looks like */
const SECRET_NAME = /cookie|authori[sz]ation|token|secret|password|session|api[-_]?key|signature/i

const CREDENTIAL_QUERY_NAMES = new Set([
  'token',
  'access_token',
  'id_token',
  'refresh_token',
  'api_key',
  'apikey',
  'key',
  'x-api-key',
  'secret',
  'client_secret',
  'password',
  'signature',
  'sig',
  'code',
  'lsv',
])

/**
 * This system's secrets inside any text. A key's 12-character display prefix (`lsk_` + 8) is
 * not a secret and passes (the inbound debugger shows it to say which key was used).
 */
const SECRET_IN_TEXT = /(?:lsk|lst|whsec)_[A-Za-z0-9_+/=-]{16,}/g
/** the session cookie, wherever a cookie header's text lands (`lsv_portal=…`, `__Host-lsv_portal=…`) */
const SESSION_COOKIE_IN_TEXT = /(\blsv_portal=)[^;,\s]+/g
/** path segments that are credentials themselves: the one-time reveal page's id */
const SECRET_PATH = /(\/portal\/reveal\/)[^/?#\s]+/g
/** a portal secret (sign-in token, session secret): 256 random bits, base64url */
const WHOLE_SECRET = /^[A-Za-z0-9_-]{43}$/
/** an absolute URL inside text (an error message naming the URL it failed on) */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi
/** a literal each of SECRET_IN_TEXT, SESSION_COOKIE_IN_TEXT, URL_IN_TEXT and SECRET_PATH needs to match (redactText's fast path) */
const MAY_HOLD_SECRET = /lsk_|lst_|whsec_|lsv_portal=|:\/\/|\/portal\/reveal\//
/** `scheme://user:password@` */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#@]*@/i

/** pino `redact` paths for the credential headers wherever a logged object carries headers. */
export function credentialHeaderPaths(): string[] {
  const owners = ['req.headers', 'request.headers', 'res.headers', 'headers', '*.headers']
  return owners.flatMap((owner) => CREDENTIAL_HEADERS.map((h) => `${owner}["${h}"]`))
}

/**
 * A record field's name that would hold a secret (a key, a token, a signing secret, a URL with a
 * token in it): `*_id` names are ids and pass. For what a caller describes (audit details).
 */
const SECRET_FIELD_NAME = /(^|_)(key|token|secret|password|url|cookie)s?$/i

export function isSecretFieldName(name: string): boolean {
  return SECRET_FIELD_NAME.test(name)
}

/** Whether a header named `name` holds a credential whatever its value. */
function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name)
}

/** One `name=value` pair (of a query or a fragment) with its value redacted when the name is a credential's. */
function redactPair(part: string): string {
  const eq = part.indexOf('=')
  if (eq < 0) return part
  const rawName = part.slice(0, eq)
  let name: string
  try {
    name = decodeURIComponent(rawName.replace(/\+/g, ' '))
  } catch {
    name = rawName
  }
  return CREDENTIAL_QUERY_NAMES.has(name.trim().toLowerCase()) ? `${rawName}=${REDACTED}` : part
}

/**
 * A URL (absolute or a request target such as `/v1/contacts/partnercrm?token=…`) with the value
 * of every credential parameter replaced by `[redacted]`, a secret path segment (a reveal id)
 * and the userinfo too; everything else is kept byte for byte (no re-encoding), so the URL is
 * still the requested one.
 *
 * Parameters are looked for in the query and in the fragment alike, each split at `&` and `;`:
 * a request target never carries a fragment, but a client can send one anyway (`?x=1#&token=…`),
 * and fastify's query parser reads everything after `?`, `#` included, so a token there
 * authenticates; it must not be logged either (issue 21 item 7). Never throws.
 */
export function redactUrl(url: string | undefined | null): string | undefined {
  if (url === undefined || url === null) return undefined
  const start = url.search(/[?#]/)
  const base = (start < 0 ? url : url.slice(0, start)).replace(USERINFO, `$1${REDACTED}@`).replace(SECRET_PATH, `$1${REDACTED}`)
  if (start < 0) return base
  // every separator is kept as it was: only the values between them change
  const pieces = url.slice(start + 1).split(/([&;?#])/)
  return `${base}${url[start]}${pieces.map((piece, i) => (i % 2 === 1 ? piece : redactPair(piece))).join('')}`
}

/**
 * A receiver's URL as a sink may show it: scheme, host, port and path, with its userinfo and
 * its whole query and fragment replaced (the delivery debugger, outbound spans). What it names
 * stays recognisable; whatever credential the tenant put in it does not.
 */
export function redactReceiverUrl(url: string | undefined | null): string | undefined {
  if (url === undefined || url === null) return undefined
  const start = url.search(/[?#]/)
  const base = (start < 0 ? url : url.slice(0, start)).replace(USERINFO, `$1${REDACTED}@`).replace(SECRET_PATH, `$1${REDACTED}`)
  return start < 0 ? base : `${base}${url[start]}${REDACTED}`
}

/**
 * Any text with the secrets in it replaced: this system's credentials wherever they appear, the
 * credential parameters and userinfo of every URL in it. Never throws; text without a secret
 * comes back as the same string.
 */
export function redactText(text: string): string {
  // every pattern below contains one of these literals: a text without any (most header values,
  // error messages, excerpts) comes back untouched after one scan instead of four replaces
  if (!MAY_HOLD_SECRET.test(text)) return text
  return text
    .replace(SECRET_IN_TEXT, REDACTED)
    .replace(SESSION_COOKIE_IN_TEXT, `$1${REDACTED}`)
    .replace(URL_IN_TEXT, (url) => redactUrl(url) ?? url)
    .replace(SECRET_PATH, `$1${REDACTED}`)
}

/**
 * A field value a caller describes (audit details): redactText, and a value that is a whole portal
 * secret goes whole. Not applied to any text: ids of other shapes (a queue name) can be 43 such
 * characters too.
 */
export function redactFieldValue(text: string): string {
  return WHOLE_SECRET.test(text) ? REDACTED : redactText(text)
}

/** Header values as a sink keeps them: a credential header's value replaced, the others through redactText. */
export function redactHeaderValue(name: string, value: string): string {
  return isSecretName(name) ? REDACTED : redactText(value)
}
