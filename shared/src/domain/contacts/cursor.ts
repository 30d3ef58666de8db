import { AppError } from '../../errors/app-error.ts'

/**
 * Opaque keyset cursors (contact list, delivery log): base64url of `<kind>:<last id>`. Opaque
 * to callers so the ordering key can change without breaking them; the kind keeps a cursor of
 * one list from being replayed on another. Anything that does not decode answers 400
 * `invalid cursor`.
 */
export function encodeKeysetCursor(kind: string, lastId: string): string {
  return Buffer.from(`${kind}:${lastId}`, 'utf8').toString('base64url')
}

export function decodeKeysetCursor(kind: string, cursor: string | undefined): string | undefined {
  if (cursor === undefined || cursor === '') return undefined
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(cursor)) throw new AppError('invalid_cursor')
  const text = Buffer.from(cursor, 'base64url').toString('utf8')
  const prefix = `${kind}:`
  if (!text.startsWith(prefix) || text.length === prefix.length || text.length > 300) throw new AppError('invalid_cursor')
  return text.slice(prefix.length)
}

export const encodeContactCursor = (lastId: string) => encodeKeysetCursor('c1', lastId)
export const decodeContactCursor = (cursor: string | undefined) => decodeKeysetCursor('c1', cursor)
