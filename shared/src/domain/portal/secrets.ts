import { createHash, randomBytes } from 'node:crypto'

/**
 * The two portal secrets, a sign-in link's token and a session's cookie value: 32 random bytes as
 * 43 base64url characters each, stored only as their SHA-256. (A keyed hash, as for API keys,
 * adds nothing here: 256 random bits cannot be guessed from a leaked hash either way.)
 */
export const PORTAL_SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/

export function newPortalSecret(): string {
  return randomBytes(32).toString('base64url')
}

/** SHA-256 (hex): the only form of a token or cookie value that is stored. */
export function hashPortalSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex')
}
