import type { IncomingMessage } from 'node:http'
import { AppError } from '../errors/app-error.ts'

/**
 * Request shapes refused before routing with 400 `bad request` (issue 21 items 7 and 8):
 *
 * - **A fragment in the request target** (`/v1/contacts/x?y=1#&token=…`). RFC 9112 has no
 *   fragment in a request target (browsers strip it before sending), but node passes it through
 *   and fastify's query parser reads past `#`, so a token hidden behind it authenticated while
 *   URL redaction treated it as "only a fragment". Nobody we serve sends one; refusing it is
 *   simpler than agreeing with every parser about where a fragment ends.
 * - **More than one `Host` header** (RFC 9112 section 3.2: a server MUST answer 400). Node keeps
 *   the first one; a proxy in front may have routed on the last, so the tenant we resolve from
 *   the host could differ from the one the proxy saw.
 * - **No `Host` in an HTTP/1.1 request** (the same section: a server MUST answer 400). Node's own
 *   answer (`requireHostHeader`, turned off in base-app.ts) had an empty body, not the envelope.
 */
export function refuseAmbiguousTarget(req: IncomingMessage): void {
  if (req.url?.includes('#')) throw new AppError('bad_request')
  const raw = req.rawHeaders
  let hosts = 0
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host' && ++hosts > 1) throw new AppError('bad_request')
  }
  if (hosts === 0 && req.httpVersionMajor === 1 && req.httpVersionMinor === 1) throw new AppError('bad_request')
}

/**
 * The URL the router sees (fastify's `rewriteUrl`). A path whose percent-encoding does not decode
 * (`/v1/contacts/%E9`, `%zz`, the overlong `%C0%AF`) made the router answer 400 before any route
 * ran, so before the subdomain's 404 and the credential's 401 that every route answers first
 * (docs/errors.md, "Credentials before parameters"). Such a path is routed as the text it is:
 * every `%` in it becomes `%25`, so a path parameter holds the characters sent (an unknown source
 * id, a contact id that matches none) and the route answers as it does for any value it does
 * not know. A path that decodes is left alone; the query string is left alone.
 */
export function routableUrl(url: string): string {
  if (!url.includes('%')) return url
  const q = url.indexOf('?')
  const path = q === -1 ? url : url.slice(0, q)
  try {
    decodeURIComponent(path)
    return url
  } catch {
    return path.replaceAll('%', '%25') + (q === -1 ? '' : url.slice(q))
  }
}
