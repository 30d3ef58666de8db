import type { IncomingMessage } from 'node:http'

/**
 * Credential headers that must appear at most once (contract section 5): the key forms and the
 * source token header. Node keeps only the first `Authorization` of a request and joins repeated
 * custom headers with ", ", so "a valid key, then junk" could pass. A repeated credential header
 * is a malformed credential: its value is replaced by the list of every value it was sent with,
 * which the credential checks (domain/auth) refuse as they refuse any malformed credential (401).
 */
const SINGLE_CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(['authorization', 'x-api-key', 'x-webhook-token'])

export function markRepeatedCredentialHeaders(req: IncomingMessage): void {
  const raw = req.rawHeaders
  let seen: Set<string> | undefined
  let repeated: Set<string> | undefined
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase()
    if (!SINGLE_CREDENTIAL_HEADERS.has(name)) continue
    seen ??= new Set()
    if (seen.has(name)) (repeated ??= new Set()).add(name)
    else seen.add(name)
  }
  if (!repeated) return
  const distinct = req.headersDistinct
  for (const name of repeated) (req.headers as Record<string, unknown>)[name] = distinct[name]
}
