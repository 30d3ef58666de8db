import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../services/portal-api/src/app.ts'
import type { App } from '@lsv/shared/http/base-app.ts'
import { authenticateOperator } from '@lsv/shared/domain/auth/authenticate-api-key.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { ADMIN, call, OPERATOR_TOKEN } from './harness.ts'

/**
 * The operator token is accepted only when it is exactly the configured one: no prefix of it, no
 * longer string starting with it, no other last character, no other case.
 *
 * Mutations these tests catch (the first survived every main-suite test before):
 * - comparing only a prefix, e.g. in authenticateOperator
 *   `safeEqual(digest(presented), digest(expected.slice(0, presented.length)))`;
 * - comparing only the first n characters (`presented.slice(0, 8) === expected.slice(0, 8)`);
 * - comparing case-insensitively (`presented.toLowerCase()` on both sides).
 */

const T = OPERATOR_TOKEN
const flipCase = (c: string) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())
const nextChar = (c: string) => String.fromCharCode(c.charCodeAt(0) + 1)

const NEAR_MISSES: Array<[string, string]> = [
  ...Array.from({ length: T.length - 1 }, (_, i) => [`prefix of ${i + 1}`, T.slice(0, i + 1)] as [string, string]),
  ['longer by one', `${T}x`],
  ['longer: itself twice', `${T}${T}`],
  ['longer by a digit', `${T}0`],
  ['last character differs', T.slice(0, -1) + nextChar(T.at(-1)!)],
  ['first character differs', nextChar(T[0]!) + T.slice(1)],
  ['middle character differs', T.slice(0, 6) + nextChar(T[6]!) + T.slice(7)],
  ['upper case', T.toUpperCase()],
  ['first letter upper case', flipCase(T[0]!) + T.slice(1)],
  ['last letter upper case', T.slice(0, -1) + flipCase(T.at(-1)!)],
  ['one character dropped in the middle', T.slice(0, 6) + T.slice(7)],
]

let deps: Awaited<ReturnType<typeof createTestDeps>>
let app: App
let accountId: string

beforeAll(async () => {
  deps = await createTestDeps()
  app = await buildApp(deps)
  const res = await call(app, 'POST', ADMIN, { public_id: `op-${randomUUID().slice(0, 8)}` })
  expect(res.statusCode).toBe(201)
  accountId = res.json().id
})

afterAll(async () => {
  if (accountId) await deps.tenants.deleteAccountData(accountId).catch(() => {})
  await app?.close()
  await deps?.cleanup()
})

describe('operator token: only the exact token', () => {
  it('the check itself: the token passes, every near miss is 401 unauthorized', async () => {
    await expect(authenticateOperator(deps, `Bearer ${T}`)).resolves.toBeUndefined()
    for (const [label, token] of NEAR_MISSES) {
      await expect(authenticateOperator(deps, `Bearer ${token}`), label).rejects.toMatchObject({ code: 'unauthorized' })
    }
  })

  // the account routes (the admin onRequest hook), and the two route files that check on their own
  const routes = (): Array<[Parameters<typeof call>[1], string, unknown, number]> => [
    ['GET', `${ADMIN}/${accountId}`, undefined, 200],
    ['GET', `${ADMIN}/${accountId}/integrations/${randomUUID()}/deliveries`, undefined, 404],
    ['POST', `${ADMIN}/${accountId}/visits`, { invalid: true }, 400],
  ]

  it('over HTTP: each route answers with the token, and 401 to every near miss', async () => {
    for (const [method, url, payload, expected] of routes()) {
      const good = await call(app, method, url, payload, { authorization: `Bearer ${T}` })
      expect(good.statusCode, `${method} ${url}`).toBe(expected)
      for (const [label, token] of NEAR_MISSES) {
        const res = await call(app, method, url, payload, { authorization: `Bearer ${token}` })
        expect({ label, url, status: res.statusCode, body: res.json() }).toEqual({ label, url, status: 401, body: { ok: false, error: 'unauthorized' } })
      }
    }
  })
})
