import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { tagLink } from '@lsv/shared/domain/links/tag-link.ts'
import { hashOpaqueToken, newOpaqueToken, OPAQUE_TOKEN_PATTERN } from '@lsv/shared/domain/links/opaque.ts'
import { parseSignedToken, signLinkToken, verifyLinkToken } from '@lsv/shared/domain/links/signed.ts'
import { parseKeySet } from '@lsv/shared/domain/links/signing-keys.ts'

describe('tagLink', () => {
  const tag = (raw: string) => tagLink(new URL(raw), 'a.TOKEN')

  it('appends lsv to a URL without a query', () => {
    expect(tag('https://example.com')).toBe('https://example.com/?lsv=a.TOKEN')
  })

  it('keeps the existing query byte for byte and the fragment', () => {
    expect(tag('https://example.com/p?a=b%20c&flag&b=+&&x=1#frag?y=2')).toBe('https://example.com/p?a=b%20c&flag&b=+&&x=1&lsv=a.TOKEN#frag?y=2')
  })

  it('replaces any existing lsv parameter (also spelled with escapes)', () => {
    expect(tag('https://example.com/?lsv=old&a=1&ls%76=x&lsv&lsv=')).toBe('https://example.com/?a=1&lsv=a.TOKEN')
  })

  it('leaves parameters that merely contain lsv alone', () => {
    expect(tag('https://example.com/?xlsv=1&lsvx=2&a=lsv')).toBe('https://example.com/?xlsv=1&lsvx=2&a=lsv&lsv=a.TOKEN')
  })

  it('keeps a fragment that looks like a query', () => {
    const url = new URL(tag('https://example.com/#/route?lsv=inner'))
    expect(url.hash).toBe('#/route?lsv=inner')
    expect(url.searchParams.getAll('lsv')).toEqual(['a.TOKEN'])
  })
})

describe('opaque tokens', () => {
  it('are a. plus 43 base64url characters and differ every time', () => {
    const tokens = new Set(Array.from({ length: 50 }, () => newOpaqueToken()))
    expect(tokens.size).toBe(50)
    for (const t of tokens) {
      expect(t).toMatch(OPAQUE_TOKEN_PATTERN)
      expect(t.length).toBe(45)
    }
  })

  it('hash as SHA-256 hex of the whole token', () => {
    expect(hashOpaqueToken('a.x')).toMatch(/^[0-9a-f]{64}$/)
    expect(hashOpaqueToken('a.x')).not.toBe(hashOpaqueToken('a.y'))
  })
})

describe('signed tokens', () => {
  const key = randomBytes(32)
  const claims = { acc: 'acc-1', sub: '6c1f0c5e-8b0e-8c1a-9f00-0123456789ab', iat: 1_788_000_000, exp: 1_788_000_600 }
  const now = claims.iat * 1000
  const token = signLinkToken('kid1', key, claims)

  const verify = (t: string, k = key, at = now) => {
    const parsed = parseSignedToken(t)
    return parsed ? verifyLinkToken(parsed, k, at) : null
  }

  it('have four parts and round-trip their claims', () => {
    expect(token.split('.')).toHaveLength(4)
    expect(token.startsWith('s.kid1.')).toBe(true)
    expect(verify(token)).toEqual(claims)
    const decoded = JSON.parse(Buffer.from(token.split('.')[2]!, 'base64url').toString('utf8'))
    expect(decoded).toEqual(claims)
  })

  it('expire at exp (exclusive)', () => {
    expect(verify(token, key, claims.exp * 1000 - 1)).not.toBeNull()
    expect(verify(token, key, claims.exp * 1000)).toBeNull()
  })

  it('without exp never expire', () => {
    const t = signLinkToken('kid1', key, { acc: 'a', sub: 'b', iat: 1 })
    expect(verify(t, key, Date.UTC(2100, 0, 1))).toEqual({ acc: 'a', sub: 'b', iat: 1 })
  })

  it('do not verify with another key', () => {
    expect(verify(token, randomBytes(32))).toBeNull()
  })

  it('reject every single-character change in every part', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.'
    let tried = 0
    for (let i = 0; i < token.length; i++) {
      for (const replacement of [alphabet[(alphabet.indexOf(token[i]!) + 1) % alphabet.length]!, '.', '=', '+']) {
        if (replacement === token[i]) continue
        const tampered = token.slice(0, i) + replacement + token.slice(i + 1)
        tried++
        // the same key is offered for any kid, so only the signature can refuse it
        expect(verify(tampered), `position ${i} -> ${replacement}`).toBeNull()
      }
    }
    expect(tried).toBeGreaterThan(token.length * 3)
  })

  it('reject every single-bit flip of the decoded claims and signature', () => {
    const [, kid, claimsPart, sig] = token.split('.') as [string, string, string, string]
    for (const [index, part] of [
      [2, claimsPart],
      [3, sig],
    ] as const) {
      const bytes = Buffer.from(part, 'base64url')
      for (let bit = 0; bit < bytes.length * 8; bit++) {
        const copy = Buffer.from(bytes)
        copy[bit >> 3]! ^= 1 << (bit & 7)
        const parts = ['s', kid, claimsPart, sig]
        parts[index] = copy.toString('base64url')
        expect(verify(parts.join('.'))).toBeNull()
      }
    }
  })

  it('reject a non-canonical spelling of the right signature bytes', () => {
    const sig = token.split('.')[3]!
    // the last of 43 base64url characters carries 2 unused bits
    const last = sig[42]!
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const sibling = alphabet[alphabet.indexOf(last) ^ 1]!
    const variant = token.slice(0, -1) + sibling
    expect(Buffer.from(variant.split('.')[3]!, 'base64url').equals(Buffer.from(sig, 'base64url'))).toBe(true)
    expect(verify(variant)).toBeNull()
  })

  it('reject wrong shapes', () => {
    for (const bad of [
      '',
      's.',
      's.kid1',
      `${token}.x`,
      token.replace(/^s\./, 'x.'),
      `s..${token.split('.')[2]}.${token.split('.')[3]}`,
      's.k!d.a.b',
      'a'.repeat(2000),
    ]) {
      expect(verify(bad)).toBeNull()
    }
  })

  it('reject claims without account or contact, even when signed', () => {
    expect(verify(signLinkToken('kid1', key, { acc: '', sub: 'x', iat: 1 }))).toBeNull()
    expect(verify(signLinkToken('kid1', key, { acc: 'x', sub: '', iat: 1 }))).toBeNull()
    expect(verify(signLinkToken('kid1', key, { acc: 'x', sub: 'y', iat: 1.5 }))).toBeNull()
  })
})

describe('key set parsing', () => {
  it('needs the current key among the keys', () => {
    const k = randomBytes(32).toString('base64')
    expect(parseKeySet(JSON.stringify({ current: 'a', keys: { a: k } })).keys.get('a')!.length).toBe(32)
    expect(() => parseKeySet(JSON.stringify({ current: 'b', keys: { a: k } }))).toThrow()
    expect(() => parseKeySet('not json')).toThrow()
    expect(() => parseKeySet(JSON.stringify({ current: 'a', keys: { a: 'c2hvcnQ=' } }))).toThrow()
  })
})
