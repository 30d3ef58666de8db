import { createHash, randomBytes, randomUUID } from 'node:crypto'

/**
 * The deterministic contact id for (account, source, external_id): a UUID (version 8, RFC 9562)
 * built from SHA-256 of the three parts. It is also the Firestore document id, so ids (and
 * writes) spread evenly over the key space and a re-push lands on the same document.
 */
export function contactIdFor(accountId: string, source: string, externalId: string): string {
  const h = createHash('sha256').update(`${accountId}\u0000${source}\u0000${externalId}`).digest()
  const b = Buffer.from(h.subarray(0, 16))
  b[6] = (b[6]! & 0x0f) | 0x80 // version 8
  b[8] = (b[8]! & 0x3f) | 0x80 // RFC 9562 variant
  const hex = b.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

export function newId(): string {
  return randomUUID()
}

/** A random url-safe id with a prefix, e.g. `src_…`, `int_…`, `dlv_…`. */
export function prefixedId(prefix: string, bytes = 12): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url')}`
}
