import { createHmac, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { generateApiKey, generateSourceToken, hashSecret } from '@lsv/shared/domain/auth/hashing.ts'

/**
 * hashSecret computes HMAC-SHA256 from two one-shot SHA-256 calls on pad blocks derived once per
 * pepper (domain/auth/hashing.ts). Every stored key and token hash depends on it giving exactly
 * what createHmac gives, for any pepper (shorter than, equal to, longer than a block) and any
 * secret (empty, unicode, longer than the scratch block), also when peppers alternate and after
 * a longer secret was hashed (its bytes are zeroed, not left to pad a shorter one).
 */
const reference = (pepper: string, secret: string) => createHmac('sha256', pepper).update(secret, 'utf8').digest('hex')

const peppers = [
  '',
  'p',
  'bench-pepper',
  'x'.repeat(63),
  'y'.repeat(64),
  'z'.repeat(65),
  'w'.repeat(300),
  'Zoë – 東京 ✓',
  randomBytes(32).toString('base64url'),
]
const secrets = [
  '',
  'a',
  generateApiKey(),
  generateSourceToken(),
  'é'.repeat(200),
  '東'.repeat(256),
  '🙂'.repeat(128),
  'lone \ud800 surrogate',
  's'.repeat(256),
  's'.repeat(257),
  'long '.repeat(400),
  randomBytes(48).toString('base64url'),
]

describe('hashSecret', () => {
  it('equals HMAC-SHA256 for every pepper and secret, in any order of calls', () => {
    for (const pepper of peppers)
      for (const secret of secrets) expect(hashSecret(pepper, secret), `${pepper.slice(0, 9)} / ${secret.slice(0, 9)}`).toBe(reference(pepper, secret))
    // peppers alternating call by call, long secrets before short ones
    for (const secret of [...secrets].reverse()) for (const pepper of peppers) expect(hashSecret(pepper, secret)).toBe(reference(pepper, secret))
  })

  it('equals HMAC-SHA256 for many random keys', () => {
    const pepper = randomBytes(32).toString('base64url')
    for (let i = 0; i < 500; i++) {
      const key = i % 2 === 0 ? generateApiKey() : randomBytes(i % 97).toString('hex')
      expect(hashSecret(pepper, key)).toBe(reference(pepper, key))
    }
  })
})
