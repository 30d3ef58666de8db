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
 */
export function refuseAmbiguousTarget(req: IncomingMessage): void {
  if (req.url?.includes('#')) throw new AppError('bad_request')
  const raw = req.rawHeaders
  let hosts = 0
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host' && ++hosts > 1) throw new AppError('bad_request')
  }
}
