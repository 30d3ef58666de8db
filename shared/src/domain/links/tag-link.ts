/** The query parameter that carries a link token. */
const LINK_TOKEN_PARAM = 'lsv'

function isTokenParam(pair: string): boolean {
  const name = pair.split('=', 1)[0]!.replace(/\+/g, ' ')
  try {
    return decodeURIComponent(name) === LINK_TOKEN_PARAM
  } catch {
    return false
  }
}

/**
 * The destination with `lsv=<token>` appended. The existing query is kept byte for byte (no
 * re-encoding through URLSearchParams, which would turn `%20` into `+` or `?flag` into `?flag=`)
 * and the fragment is untouched. Any `lsv` parameter already present is removed first, so the
 * link carries exactly one token and a stale one cannot attribute the visit to someone else.
 * Tokens are base64url and dots, which need no escaping in a query.
 */
export function tagLink(destination: URL, token: string): string {
  const url = new URL(destination.href)
  const query = url.search.slice(1)
  const pairs = query === '' ? [] : query.split('&').filter((pair) => !isTokenParam(pair))
  pairs.push(`${LINK_TOKEN_PARAM}=${token}`)
  url.search = `?${pairs.join('&')}`
  return url.href
}
