import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { HashedSecret } from '../../model/records.ts'

/**
 * Keys and tokens are stored only as a keyed hash: HMAC-SHA256 with the platform's key pepper
 * (Secret Manager `key-pepper`). A leaked database alone does not let anyone verify guesses.
 */
export function hashSecret(pepper: string, secret: string): string {
  return createHmac('sha256', pepper).update(secret, 'utf8').digest('hex')
}

/** 32 random bytes as 43 base64url characters. */
function randomToken(): string {
  return randomBytes(32).toString('base64url')
}

/** A tenant API key: `lsk_` + 43 base64url characters (contract section 5). */
export function generateApiKey(): string {
  return `lsk_${randomToken()}`
}

/** A per-source webhook token or partner CRM location token. */
export function generateSourceToken(): string {
  return `lst_${randomToken()}`
}

/** Constant-time string equality (length leaks only through the hash, which is fixed). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8')
  const bb = Buffer.from(b, 'utf8')
  if (ab.length !== bb.length) {
    // still spend the comparison so timing does not depend on where the lengths differ
    timingSafeEqual(ab, ab)
    return false
  }
  return timingSafeEqual(ab, bb)
}

/**
 * True when the candidate hash equals one of the stored hashes that is still valid at `nowMs`.
 * Every stored hash is compared (no early exit), so timing does not say which one matched.
 */
export function matchesHashedSecret(candidateHash: string, stored: readonly HashedSecret[], nowMs: number): boolean {
  let match = false
  for (const s of stored) {
    const equal = safeEqual(candidateHash, s.hash)
    const valid = s.expires_at === null || Date.parse(s.expires_at) > nowMs
    match = (equal && valid) || match
  }
  return match
}
