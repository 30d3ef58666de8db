import { describe, expect, it } from 'vitest'
import { activeSecrets, generateSigningSecret, signatureHeaders, signingKeyOf, signOnce } from '@lsv/shared/domain/webhooks/signing.ts'

/**
 * Signing against fixed values: the published Standard Webhooks test vector (computed
 * independently, e.g. `python3 -c "import hmac,hashlib,base64; …"`), the secret format, the
 * expiry instant and the key cache's bound. Written against the signing mutants StrykerJS found
 * surviving (npm run test:mutation -- ssrf); signing.test.ts checks interoperability.
 */

// https://github.com/standard-webhooks/standard-webhooks (spec test vector)
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
}

describe('signing: fixed values', () => {
  it('signs the Standard Webhooks test vector to its published signature', () => {
    expect(signOnce(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature)
    expect(signOnce(VECTOR.secret, VECTOR.id, VECTOR.timestamp, Buffer.from(VECTOR.body))).toBe(VECTOR.signature)
    // a secret given without its prefix is the same key
    expect(signOnce(VECTOR.secret.slice('whsec_'.length), VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature)
  })

  it('headers: the timestamp in whole seconds, one signature per secret in order', () => {
    const headers = signatureHeaders([VECTOR.secret, VECTOR.secret], VECTOR.id, VECTOR.timestamp * 1000 + 999, VECTOR.body)
    expect(headers).toEqual({
      'webhook-id': VECTOR.id,
      'webhook-timestamp': String(VECTOR.timestamp),
      'webhook-signature': `${VECTOR.signature} ${VECTOR.signature}`,
      'x-service-signature': `${VECTOR.signature} ${VECTOR.signature}`,
      'x-service-idempotency-key': VECTOR.id,
    })
  })

  it('a new secret is whsec_ and 32 random bytes in base64', () => {
    const a = generateSigningSecret()
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32)
    expect(generateSigningSecret()).not.toBe(a)
  })

  it('a secret stops signing at the instant it expires', () => {
    const now = Date.UTC(2026, 8, 4, 12)
    const at = (ms: number) => new Date(ms).toISOString()
    const secrets = [
      { secret: 'a', created_at: at(0), expires_at: at(now) },
      { secret: 'b', created_at: at(0), expires_at: at(now + 1) },
      { secret: 'c', created_at: at(0), expires_at: null },
    ]
    expect(activeSecrets(secrets, now)).toEqual(['b', 'c'])
    expect(activeSecrets(secrets, now - 1)).toEqual(['a', 'b', 'c'])
  })
})

describe('signing: the key cache', () => {
  it('keeps keys across other secrets (a miss does not empty it)', () => {
    const one = generateSigningSecret()
    const key = signingKeyOf(one)
    signingKeyOf(generateSigningSecret())
    signingKeyOf(generateSigningSecret())
    expect(signingKeyOf(one)).toBe(key)
  })

  it('holds at most 10,000 keys: the least recently used goes first', () => {
    const probe = generateSigningSecret()
    const key = signingKeyOf(probe)
    // the probe and 9,999 others: 10,000, nothing of them evicted
    for (let i = 0; i < 9_999; i++) signingKeyOf(generateSigningSecret())
    expect(signingKeyOf(probe)).toBe(key)
    // the probe was just used; 10,000 newer distinct secrets push it out
    for (let i = 0; i < 10_000; i++) signingKeyOf(generateSigningSecret())
    expect(signingKeyOf(probe)).not.toBe(key)
  })
})
