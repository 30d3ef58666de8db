import { createHash, randomBytes } from 'node:crypto'

/** `a.` + 43 base64url characters (32 random bytes). */
export const OPAQUE_TOKEN_PATTERN = /^a\.[A-Za-z0-9_-]{43}$/

/** A fresh opaque token: unguessable, meaningless without the stored hash. */
export function newOpaqueToken(): string {
  return `a.${randomBytes(32).toString('base64url')}`
}

/** SHA-256 (hex) of the whole token, `a.` included: the only form ever stored. */
export function hashOpaqueToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}
