import { describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { activeSecrets, generateSigningSecret, signatureHeaders, signingKeyOf } from '@lsv/shared/domain/webhooks/signing.ts'

const NOW = Date.UTC(2026, 8, 4, 12, 0, 0)

function verify(secret: string, body: string, headers: Record<string, string>) {
  // the package checks the timestamp against the real clock: sign at "now" for these tests
  return new Webhook(secret).verify(body, headers)
}

describe('Standard Webhooks signatures', () => {
  it('the standardwebhooks package verifies our signature over the exact body bytes', () => {
    const secret = generateSigningSecret()
    const body = JSON.stringify({ id: 'evt_1', event: 'visitor.identified', note: 'ünïcødé ✓' })
    const headers = signatureHeaders([secret], 'evt_1', Date.now(), body)
    expect(verify(secret, body, headers as unknown as Record<string, string>)).toEqual(JSON.parse(body))
    expect(headers['x-service-signature']).toBe(headers['webhook-signature'])
    expect(headers['x-service-idempotency-key']).toBe('evt_1')
    expect(headers['webhook-id']).toBe('evt_1')
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
  })

  it('a changed byte fails verification', () => {
    const secret = generateSigningSecret()
    const body = '{"id":"evt_2","a":1}'
    const headers = signatureHeaders([secret], 'evt_2', Date.now(), body) as unknown as Record<string, string>
    expect(() => verify(secret, '{"id":"evt_2","a":2}', headers)).toThrow()
    expect(() => verify(generateSigningSecret(), body, headers)).toThrow()
  })

  it('during a rotation both secrets sign, space-separated, and either verifies', () => {
    const oldSecret = generateSigningSecret()
    const newSecret = generateSigningSecret()
    const body = '{"id":"evt_3"}'
    const headers = signatureHeaders([newSecret, oldSecret], 'evt_3', Date.now(), body) as unknown as Record<string, string>
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2)
    expect(() => verify(oldSecret, body, headers)).not.toThrow()
    expect(() => verify(newSecret, body, headers)).not.toThrow()
  })

  it('only unexpired secrets sign', () => {
    const secrets = [
      { secret: 'whsec_AAAA', created_at: '2026-01-01T00:00:00Z', expires_at: null },
      { secret: 'whsec_BBBB', created_at: '2026-01-01T00:00:00Z', expires_at: new Date(NOW + 1000).toISOString() },
      { secret: 'whsec_CCCC', created_at: '2026-01-01T00:00:00Z', expires_at: new Date(NOW - 1000).toISOString() },
    ]
    expect(activeSecrets(secrets, NOW)).toEqual(['whsec_AAAA', 'whsec_BBBB'])
  })

  it('a cached (frozen) list answers from memory until one of its secrets expires', () => {
    const frozen = Object.freeze(
      [
        { secret: 'whsec_AAAA', created_at: '2026-01-01T00:00:00Z', expires_at: null },
        { secret: 'whsec_BBBB', created_at: '2026-01-01T00:00:00Z', expires_at: new Date(NOW + 1000).toISOString() },
        { secret: 'whsec_CCCC', created_at: '2026-01-01T00:00:00Z', expires_at: new Date(NOW - 1000).toISOString() },
      ].map((s) => Object.freeze(s)),
    )
    const first = activeSecrets(frozen, NOW)
    expect(first).toEqual(['whsec_AAAA', 'whsec_BBBB'])
    // mutation: computing the list on every call gives an equal but new array here
    expect(activeSecrets(frozen, NOW + 999)).toBe(first)
    // the rotation grace ends: the old secret stops signing at its expiry, not a call later
    expect(activeSecrets(frozen, NOW + 1000)).toEqual(['whsec_AAAA'])
    // a clock read earlier than the remembered answer's (a test clock) is answered afresh
    expect(activeSecrets(frozen, NOW - 2000)).toEqual(['whsec_AAAA', 'whsec_BBBB', 'whsec_CCCC'])
    // a list that may still change is never answered from memory
    const open = [{ secret: 'whsec_DDDD', created_at: '2026-01-01T00:00:00Z', expires_at: null }]
    expect(activeSecrets(open, NOW)).not.toBe(activeSecrets(open, NOW))
    open.push({ secret: 'whsec_EEEE', created_at: '2026-01-01T00:00:00Z', expires_at: null })
    expect(activeSecrets(open, NOW)).toEqual(['whsec_DDDD', 'whsec_EEEE'])
  })

  it('creates one KeyObject per secret and reuses it', () => {
    const secret = generateSigningSecret()
    expect(signingKeyOf(secret)).toBe(signingKeyOf(secret))
    expect(signingKeyOf(secret).type).toBe('secret')
  })
})
