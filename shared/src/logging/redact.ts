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

export const CREDENTIAL_HEADERS = [
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

/**
 * A URL (absolute or a request target such as `/v1/contacts/partnercrm?token=…`) with the value
 * of every credential query parameter replaced by `[redacted]`; everything else is kept byte for
 * byte (no re-encoding), so the logged URL is still the requested one.
 */
export function redactUrl(url: string | undefined | null): string | undefined {
  if (url === undefined || url === null) return undefined
  const q = url.indexOf('?')
  if (q < 0) return url
  const hash = url.indexOf('#', q)
  const query = url.slice(q + 1, hash < 0 ? undefined : hash)
  const rest = hash < 0 ? '' : url.slice(hash)
  const parts = query.split('&').map((part) => {
    const eq = part.indexOf('=')
    const rawName = eq < 0 ? part : part.slice(0, eq)
    let name: string
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' ')).toLowerCase()
    } catch {
      name = rawName.toLowerCase()
    }
    return CREDENTIAL_QUERY_NAMES.has(name) && eq >= 0 ? `${rawName}=${REDACTED}` : part
  })
  return `${url.slice(0, q)}?${parts.join('&')}${rest}`
}
