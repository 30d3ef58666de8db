import { createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { HashedSecret } from '../../model/records.ts'

/** SHA-256's block size: an HMAC key is padded (or first hashed) to it */
const BLOCK = 64
/** secrets up to this many UTF-16 units fit the scratch block (3 UTF-8 bytes each at most) */
const SCRATCH_UNITS = 256

/**
 * The pepper's two HMAC pad blocks (RFC 2104: the key XOR 0x36, XOR 0x5c), derived once per
 * pepper: the pepper itself is held for the process's life anyway (platform-secrets.ts), and the
 * pads say no more than it does. `inner` is followed by room for the secret, zeroed after each
 * use (no presented secret stays in it); `outer` by room for the inner digest.
 */
let pads: { pepper: string; inner: Buffer; outer: Buffer } | null = null

function padsOf(pepper: string): { inner: Buffer; outer: Buffer } {
  if (pads?.pepper === pepper) return pads
  let key = Buffer.from(pepper, 'utf8')
  if (key.length > BLOCK) key = Buffer.from(hash('sha256', key, 'hex'), 'hex')
  const inner = Buffer.alloc(BLOCK + 3 * SCRATCH_UNITS, 0)
  const outer = Buffer.alloc(BLOCK + 32, 0)
  inner.fill(0x36, 0, BLOCK)
  outer.fill(0x5c, 0, BLOCK)
  for (let i = 0; i < key.length; i++) {
    inner[i] = inner[i]! ^ key[i]!
    outer[i] = outer[i]! ^ key[i]!
  }
  pads = { pepper, inner, outer }
  return pads
}

/**
 * Keys and tokens are stored only as a keyed hash: HMAC-SHA256 with the platform's key pepper
 * (Secret Manager `key-pepper`). A leaked database alone does not let anyone verify guesses.
 *
 * Computed as RFC 2104 defines it, H(outer pad ‖ H(inner pad ‖ secret)), with two one-shot
 * `crypto.hash` calls on the pads derived once: `createHmac` set up an OpenSSL MAC context per
 * call, 3 % of a small push's CPU (docs/performance.md, "Fourth pass"); this is about half the
 * CPU, and the output is the same (test/auth/hash-secret.test.ts compares it with createHmac).
 */
export function hashSecret(pepper: string, secret: string): string {
  if (secret.length > SCRATCH_UNITS) return createHmac('sha256', pepper).update(secret, 'utf8').digest('hex')
  const { inner, outer } = padsOf(pepper)
  const length = inner.write(secret, BLOCK, 'utf8')
  const innerDigest = hash('sha256', inner.subarray(0, BLOCK + length), 'hex')
  inner.fill(0, BLOCK, BLOCK + length)
  outer.write(innerDigest, BLOCK, 'hex')
  return hash('sha256', outer, 'hex')
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
