/**
 * What never reaches a log line in clear: credentials carried in headers and in URLs.
 *
 * Contract section 5 names the credential headers (`authorization`, `x-api-key`,
 * `x-webhook-token`) and the `token` query parameter (a source or location token, `lst_…`); the
 * rest are the usual suspects (cookies, proxy and Cloud Run's own authorization header) and the
 * query names credentials are commonly passed under. `lsv` is a minted link token (contract 4.2):
 * whoever holds it is attributed to that contact, so it is treated as a credential too.
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

/** pino `redact` paths for the credential headers wherever a logged object carries headers. */
export function credentialHeaderPaths(): string[] {
  const owners = ['req.headers', 'request.headers', 'res.headers', 'headers', '*.headers']
  return owners.flatMap((owner) => CREDENTIAL_HEADERS.map((h) => `${owner}["${h}"]`))
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
 * of every credential parameter replaced by `[redacted]`; everything else is kept byte for byte
 * (no re-encoding), so the logged URL is still the requested one.
 *
 * Parameters are looked for in the query and in the fragment alike, each split at `&` and `;`:
 * a request target never carries a fragment, but a client can send one anyway (`?x=1#&token=…`),
 * and fastify's query parser reads everything after `?`, `#` included, so a token there
 * authenticates; it must not be logged either (issue 21 item 7). Never throws.
 */
export function redactUrl(url: string | undefined | null): string | undefined {
  if (url === undefined || url === null) return undefined
  const start = url.search(/[?#]/)
  if (start < 0) return url
  // every separator is kept as it was: only the values between them change
  const pieces = url.slice(start + 1).split(/([&;?#])/)
  return `${url.slice(0, start + 1)}${pieces.map((piece, i) => (i % 2 === 1 ? piece : redactPair(piece))).join('')}`
}
