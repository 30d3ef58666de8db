import { createHmac, timingSafeEqual } from 'node:crypto'
import { KEY_ID_PATTERN } from './signing-keys.ts'

/**
 * Signed link tokens: `s.<keyId>.<claims>.<sig>` (docs/links.md).
 * - `claims`: base64url (no padding) of the JSON `{"acc","sub","iat"[,"exp"]}` (account id,
 *   contact id, issued-at and expiry in epoch seconds);
 * - `sig`: base64url HMAC-SHA256, with the key named `keyId`, of the ASCII text `s.<keyId>.<claims>`.
 * The algorithm is fixed: nothing in the token selects it.
 */

export interface LinkClaims {
  /** account id */
  acc: string
  /** contact id */
  sub: string
  /** issued at, epoch seconds */
  iat: number
  /** expires at (exclusive), epoch seconds */
  exp?: number
}

const B64URL = /^[A-Za-z0-9_-]+$/
/** HMAC-SHA256 is 32 bytes: 43 base64url characters */
const SIG_PATTERN = /^[A-Za-z0-9_-]{43}$/
/** generous bound for two ids and two numbers; longer tokens are refused before any work */
const MAX_SIGNED_TOKEN_LENGTH = 1024

function signature(key: Buffer, signingInput: string): string {
  return createHmac('sha256', key).update(signingInput, 'ascii').digest('base64url')
}

export function signLinkToken(kid: string, key: Buffer, claims: LinkClaims): string {
  const body: LinkClaims = { acc: claims.acc, sub: claims.sub, iat: claims.iat }
  if (claims.exp !== undefined) body.exp = claims.exp
  const encoded = Buffer.from(JSON.stringify(body), 'utf8').toString('base64url')
  const signingInput = `s.${kid}.${encoded}`
  return `${signingInput}.${signature(key, signingInput)}`
}

export interface ParsedSignedToken {
  kid: string
  claims: string
  sig: string
  signingInput: string
}

/** Splits a token into its parts without trusting any of them; null when the shape is wrong. */
export function parseSignedToken(token: string): ParsedSignedToken | null {
  if (token.length > MAX_SIGNED_TOKEN_LENGTH) return null
  const parts = token.split('.')
  if (parts.length !== 4 || parts[0] !== 's') return null
  const [, kid, claims, sig] = parts as [string, string, string, string]
  if (!KEY_ID_PATTERN.test(kid) || !B64URL.test(claims) || !SIG_PATTERN.test(sig)) return null
  return { kid, claims, sig, signingInput: `s.${kid}.${claims}` }
}

function isClaims(value: unknown): value is LinkClaims {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false
  const c = value as Record<string, unknown>
  if (typeof c.acc !== 'string' || c.acc === '' || typeof c.sub !== 'string' || c.sub === '') return false
  if (typeof c.iat !== 'number' || !Number.isSafeInteger(c.iat)) return false
  if (c.exp !== undefined && (typeof c.exp !== 'number' || !Number.isSafeInteger(c.exp))) return false
  return true
}

/**
 * The claims of a well-formed token whose signature verifies with `key` and which has not
 * expired at `nowMs`; null otherwise. The signature is compared as text in constant time, so a
 * non-canonical base64url spelling of the right bytes is refused too.
 */
export function verifyLinkToken(parsed: ParsedSignedToken, key: Buffer, nowMs: number): LinkClaims | null {
  const expected = Buffer.from(signature(key, parsed.signingInput), 'ascii')
  const given = Buffer.from(parsed.sig, 'ascii')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null
  let claims: unknown
  try {
    claims = JSON.parse(Buffer.from(parsed.claims, 'base64url').toString('utf8'))
  } catch {
    return null
  }
  if (!isClaims(claims)) return null
  if (claims.exp !== undefined && Math.floor(nowMs / 1000) >= claims.exp) return null
  return claims
}
