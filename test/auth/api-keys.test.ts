import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomUUID } from 'node:crypto'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { authenticateApiKey, authenticateOperator } from '@lsv/shared/domain/auth/authenticate-api-key.ts'
import { generateApiKey, generateSourceToken, hashSecret } from '@lsv/shared/domain/auth/hashing.ts'
import { presentedSourceToken, verifySourceToken } from '@lsv/shared/domain/auth/verify-source-token.ts'
import { publicIdFromHost, resolveEdgeAccount } from '@lsv/shared/domain/tenants/resolve.ts'
import type { AccountRecord, ConnectionRecord } from '@lsv/shared/model/records.ts'
import { isAppError } from '@lsv/shared/errors/app-error.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { ACCOUNT_ONLY, createTestTenant, issuedKey, type StoredTenant } from '../helpers/tenant.ts'
import { TEST_PEPPER } from '../helpers/test-secrets.ts'

const T0 = Date.parse('2026-09-04T00:00:00.000Z')

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p
    return 'ok'
  } catch (err) {
    if (isAppError(err)) return err.code
    throw err
  }
}

describe('API key and source token authentication', () => {
  const clock = new ManualClock(T0)
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let tenant: StoredTenant
  let account: AccountRecord
  let connection: ConnectionRecord
  const keys = { good: '', links: '', expired: '', graced: '' }

  beforeAll(async () => {
    deps = await createTestDeps({ clock })
    // an account with one api connection and four keys, written into the store (T0 is the clock's now)
    tenant = await createTestTenant(deps, {
      ...ACCOUNT_ONLY,
      api: {
        source: 'crm',
        key: { name: 'good' },
        keys: {
          links: { name: 'links', scopes: ['contacts:links:write'] },
          expired: { name: 'expired', expiresAt: new Date(T0 - 1).toISOString() },
          graced: { name: 'graced', revokedAt: new Date(T0 + 60_000).toISOString() },
        },
      },
    })
    account = tenant.account
    connection = tenant.api
    keys.good = tenant.key
    for (const name of ['links', 'expired', 'graced'] as const) keys[name] = issuedKey(tenant, name)
  })
  afterAll(async () => {
    await tenant.cleanup()
    await deps.cleanup()
  })

  it('accepts exactly one key form with the scope', async () => {
    expect(await codeOf(authenticateApiKey(deps, { authorization: `Bearer ${keys.good}` }, { scope: 'contacts:write' }))).toBe('ok')
    expect(await codeOf(authenticateApiKey(deps, { 'x-api-key': keys.good }, { scope: 'contacts:write' }))).toBe('ok')
    const auth = await authenticateApiKey(deps, { 'x-api-key': keys.good }, { scope: 'contacts:write', account })
    expect(auth.account.id).toBe(account.id)
  })

  it('answers unauthorized for missing, both forms, blank, malformed, unknown, expired and other-account keys', async () => {
    const cases: Array<Record<string, string>> = [
      {},
      { authorization: `Bearer ${keys.good}`, 'x-api-key': keys.good },
      { authorization: 'Bearer ' },
      { 'x-api-key': '' },
      { authorization: `Basic ${keys.good}` },
      { authorization: 'Bearer lsk_short' },
      { authorization: `Bearer ${generateApiKey()}` },
      { authorization: `Bearer ${keys.expired}` },
    ]
    for (const headers of cases) {
      expect(await codeOf(authenticateApiKey(deps, headers, { scope: 'contacts:write' })), JSON.stringify(headers)).toBe('unauthorized')
    }
    expect(await codeOf(authenticateApiKey(deps, { 'x-api-key': keys.good }, { scope: 'contacts:write', account: { ...account, id: randomUUID() } }))).toBe(
      'unauthorized',
    )
  })

  it('answers forbidden for a valid key without the scope or without API access', async () => {
    expect(await codeOf(authenticateApiKey(deps, { 'x-api-key': keys.links }, { scope: 'contacts:write' }))).toBe('forbidden')
    expect(await codeOf(authenticateApiKey(deps, { 'x-api-key': keys.good }, { scope: 'contacts:links:write' }))).toBe('forbidden')
    await deps.tenants.updateAccount(account.id, { api_access: false })
    expect(await codeOf(authenticateApiKey(deps, { 'x-api-key': keys.good }, { scope: 'contacts:write' }))).toBe('forbidden')
    await deps.tenants.updateAccount(account.id, { api_access: true })
  })

  it('keeps a revoked key working until the end of its grace, then answers unauthorized', async () => {
    expect(await codeOf(authenticateApiKey(deps, { 'x-api-key': keys.graced }, { scope: 'contacts:write' }))).toBe('ok')
    clock.set(T0 + 60_000)
    expect(await codeOf(authenticateApiKey(deps, { 'x-api-key': keys.graced }, { scope: 'contacts:write' }))).toBe('unauthorized')
    clock.set(T0)
  })

  // What this checks is the answer, not timing (no timed tests here): the constant-time comparison
  // rests on timingSafeEqual over fixed-length digests of both sides (authenticateOperator).
  it('accepts only the exact operator token as a bearer token (missing, blank, other case, no scheme, longer: 401)', async () => {
    expect(await codeOf(authenticateOperator(deps, 'Bearer test-operator-token'))).toBe('ok')
    for (const h of [undefined, '', 'Bearer', 'Bearer test-operator-tokeN', 'test-operator-token', 'Bearer test-operator-token-longer']) {
      expect(await codeOf(authenticateOperator(deps, h)), String(h)).toBe('unauthorized')
    }
  })

  it('prefers the x-webhook-token header over the token query and honours token expiry', async () => {
    expect(presentedSourceToken({ 'x-webhook-token': 'h' }, { token: 'q' })).toBe('h')
    expect(presentedSourceToken({}, { token: 'q' })).toBe('q')
    expect(presentedSourceToken({ 'x-webhook-token': '' }, { token: 'q' })).toBe('')
    expect(presentedSourceToken({}, {})).toBeNull()
    const current = generateSourceToken()
    const previous = generateSourceToken()
    const hook: ConnectionRecord = {
      ...connection,
      type: 'webhook',
      token_hashes: [
        { hash: hashSecret(TEST_PEPPER, current), expires_at: null },
        { hash: hashSecret(TEST_PEPPER, previous), expires_at: new Date(T0 + 1000).toISOString() },
      ],
    }
    expect(await verifySourceToken(deps, hook, current)).toBe(true)
    expect(await verifySourceToken(deps, hook, previous)).toBe(true)
    expect(await verifySourceToken(deps, hook, '')).toBe(false)
    expect(await verifySourceToken(deps, hook, generateSourceToken())).toBe(false)
    clock.set(T0 + 1000)
    expect(await verifySourceToken(deps, hook, previous)).toBe(false)
    clock.set(T0)
  })

  it('resolves the edge account from the first Host label under the edge domain', async () => {
    expect(publicIdFromHost(`${account.public_id}.edge.localhost:8080`, 'edge.localhost')).toBe(account.public_id)
    expect(publicIdFromHost(`${account.public_id.toUpperCase()}.EDGE.localhost.`, 'edge.localhost')).toBe(account.public_id)
    expect(publicIdFromHost('a.b.edge.localhost', 'edge.localhost')).toBeNull()
    expect(publicIdFromHost('edge.localhost', 'edge.localhost')).toBeNull()
    expect(publicIdFromHost(`${account.public_id}.evil.com`, 'edge.localhost')).toBeNull()
    expect((await resolveEdgeAccount(deps, `${account.public_id}.edge.localhost`)).id).toBe(account.id)
    expect(await codeOf(resolveEdgeAccount(deps, 'nobody.edge.localhost'))).toBe('not_found')
    await deps.tenants.updateAccount(account.id, { active: false })
    expect(await codeOf(resolveEdgeAccount(deps, `${account.public_id}.edge.localhost`))).toBe('not_found')
    await deps.tenants.updateAccount(account.id, { active: true })
  })
})
