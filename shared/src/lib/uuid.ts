/**
 * A UUID as stored and answered (RFC 9562): lower case, without the `urn:uuid:` prefix that
 * `format: uuid` (ajv-formats) also accepts. RFC 9562 reads UUIDs case-insensitively; every UUID
 * the platform makes is stored lower case (shared/src/model/ids.ts, `randomUUID`) and stores
 * compare ids exactly, so an id in another case or in its URN form must be made canonical before
 * it is looked up. Any other string is returned as it is: what is not a UUID is not ours to change.
 */
const UUID = /^(?:urn:uuid:)?([0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12})$/i

export function canonicalUuid(value: string): string {
  const m = UUID.exec(value)
  return m ? m[1]!.toLowerCase() : value
}
