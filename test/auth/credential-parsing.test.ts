import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { authenticateApiKey, authenticateOperator, presentedApiKey } from '@lsv/shared/domain/auth/authenticate-api-key.ts'
import { hashSecret, matchesHashedSecret, safeEqual } from '@lsv/shared/domain/auth/hashing.ts'
import { presentedSourceToken, verifyLocationToken, verifySourceToken } from '@lsv/shared/domain/auth/verify-source-token.ts'
import { authenticatePartnerCrm, authenticateSource, identifyPartnerCrmToken, refuseTokenlessEarly, tokenRequired } from '@lsv/shared/domain/ingest/auth.ts'
import { isAppError } from '@lsv/shared/errors/app-error.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { TEST_PEPPER } from '../helpers/test-secrets.ts'

/**
 * Credentials at their edges: how each is read from headers and query (repeated, padded,
 * near-miss schemes), the constant-time comparisons, and the checks behind the stored state that
 * the management API never produces but a damaged or hand-edited store could (a key on a non-api
 * connection, a location on another account's connection, an expired hash still indexed).
 * Written against the auth mutants StrykerJS found surviving (npm run test:mutation -- auth).
 */

const T0 = Date.UTC(2026, 8, 4, 12)
const clock = new ManualClock(T0)
let deps: Awaited<ReturnType<typeof createTestDeps>>
let t: StoredTenant
let other: StoredTenant

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p
    return 'ok'
  } catch (err) {
    if (isAppError(err)) return err.code
    throw err
  }
}

beforeAll(async () => {
  deps = await createTestDeps({ clock })
  t = await createTestTenant(deps)
  other = await createTestTenant(deps)
})
afterAll(async () => {
  await t?.cleanup()
  await other?.cleanup()
  await deps?.cleanup()
})

describe('API keys: what is read from the headers', () => {
  const key = `lsk_${'A'.repeat(43)}`

  it('one bearer or x-api-key, case-insensitive scheme, any number of spaces, x-api-key trimmed', () => {
    expect(presentedApiKey({ authorization: `Bearer ${key}` })).toBe(key)
    expect(presentedApiKey({ authorization: `bearer   ${key}  ` })).toBe(key)
    expect(presentedApiKey({ 'x-api-key': `  ${key} ` })).toBe(key)
    expect(presentedApiKey({ authorization: [`Bearer ${key}`] })).toBe(key)
    expect(presentedApiKey({ 'x-api-key': [key] })).toBe(key)
  })

  it('null for a repeated header, another scheme, text around the key, or a malformed key', () => {
    for (const headers of [
      { authorization: [`Bearer ${key}`, `Bearer ${key}`] },
      { 'x-api-key': [key, key] },
      { authorization: `xBearer ${key}` },
      { authorization: `Token Bearer ${key}` },
      { authorization: `Bearer ${key} extra` },
      { authorization: `Bearer${key}` },
      { 'x-api-key': `x${key}` },
      { 'x-api-key': `${key}x` },
      { 'x-api-key': key.slice(0, -1) },
      { authorization: `Bearer ${key}`, 'x-api-key': key },
    ] as Array<Record<string, string | string[]>>) {
      expect(presentedApiKey(headers), JSON.stringify(headers)).toBeNull()
    }
  })

  it('a key stored on a connection that is not an api connection is refused', async () => {
    const onWebhook = `lsk_${'B'.repeat(43)}`
    await deps.tenants.createApiKey({
      ...t.keyRecord,
      id: `key-wh-${T0}`,
      connection_id: t.webhook.id,
      hash: hashSecret(TEST_PEPPER, onWebhook),
      prefix: onWebhook.slice(0, 8),
    })
    expect(await codeOf(authenticateApiKey(deps, { 'x-api-key': onWebhook }, { scope: 'contacts:write' }))).toBe('unauthorized')
    expect(await codeOf(authenticateApiKey(deps, { 'x-api-key': t.key }, { scope: 'contacts:write' }))).toBe('ok')
  })
})

describe('the operator token: what is read from the header', () => {
  const T = 'test-operator-token'
  it.each([
    [`Bearer ${T}`, 'ok'],
    [`bearer  ${T} `, 'ok'],
    [[`Bearer ${T}`], 'ok'],
    [[`Bearer ${T}`, `Bearer ${T}`], 'unauthorized'],
    [`xBearer ${T}`, 'unauthorized'],
    [`Bearer ${T} extra`, 'unauthorized'],
    [`Bearer${T}`, 'unauthorized'],
    [T, 'unauthorized'],
    [undefined, 'unauthorized'],
    ['Bearer ', 'unauthorized'],
  ] as Array<[string | string[] | undefined, string]>)('%j -> %s', async (header, expected) => {
    expect(await codeOf(authenticateOperator(deps, header))).toBe(expected)
  })
})

describe('hashing', () => {
  it('safeEqual: equal strings only; different lengths are false, never a throw', () => {
    expect(safeEqual('abc', 'abc')).toBe(true)
    expect(safeEqual('abc', 'abd')).toBe(false)
    expect(safeEqual('abc', 'abcd')).toBe(false)
    expect(safeEqual('', 'a')).toBe(false)
    expect(safeEqual('é', 'e\u0301')).toBe(false)
  })

  it('matchesHashedSecret: any stored hash still valid; one expires at its instant', () => {
    const stored = [
      { hash: 'a'.repeat(64), expires_at: new Date(T0).toISOString() },
      { hash: 'b'.repeat(64), expires_at: null },
    ]
    expect(matchesHashedSecret('a'.repeat(64), stored, T0 - 1)).toBe(true)
    expect(matchesHashedSecret('a'.repeat(64), stored, T0)).toBe(false)
    expect(matchesHashedSecret('b'.repeat(64), stored, T0 + 1e9)).toBe(true)
    expect(matchesHashedSecret('c'.repeat(64), stored, T0)).toBe(false)
    expect(matchesHashedSecret('a'.repeat(64), [], T0)).toBe(false)
  })
})

describe('source tokens: what is read from the header and the query', () => {
  it('the header wins, even blank or repeated (no fallback); values are trimmed', () => {
    expect(presentedSourceToken({ 'x-webhook-token': ' h ' }, { token: 'q' })).toBe('h')
    expect(presentedSourceToken({ 'x-webhook-token': ['h'] }, { token: 'q' })).toBe('h')
    expect(presentedSourceToken({ 'x-webhook-token': ['h', 'h'] }, { token: 'q' })).toBe('')
    expect(presentedSourceToken({ 'x-webhook-token': '' }, { token: 'q' })).toBe('')
    expect(presentedSourceToken({}, { token: ' q ' })).toBe('q')
    expect(presentedSourceToken({}, { token: ['q'] })).toBe('q')
    expect(presentedSourceToken({}, { token: ['q', 'r'] })).toBe('')
    expect(presentedSourceToken({}, { token: [1] })).toBe('')
  })

  it('no token: no header, and no string token in the query', () => {
    for (const query of [{}, null, undefined, 'token=q', { token: 1 }, { token: { a: 'q' } }, { other: 'q' }]) {
      expect(presentedSourceToken({}, query), JSON.stringify(query)).toBeNull()
    }
  })

  it('a blank token never matches, even a stored hash of the empty string', async () => {
    const blankHash = [{ hash: hashSecret(TEST_PEPPER, ''), expires_at: null }]
    expect(await verifySourceToken(deps, { ...t.webhook, token_hashes: blankHash }, '')).toBe(false)
    expect(
      await verifyLocationToken(
        deps,
        { account_id: t.account.id, connection_id: t.partner.id, location_id: 'x', token_hashes: blankHash, active: true, created_at: '', updated_at: '' },
        '',
      ),
    ).toBe(false)
    expect(await verifySourceToken(deps, t.webhook, t.sourceToken)).toBe(true)
  })
})

describe('authenticateSource behind the stored state', () => {
  it('a connection that is not a webhook connection is no source, whatever token hashes it holds', async () => {
    const token = 'lst_on-an-api-connection'
    const api = { ...t.api, id: `con-api-${T0}`, token_hashes: [{ hash: hashSecret(TEST_PEPPER, token), expires_at: null }] }
    await deps.tenants.createConnection(api)
    expect(await codeOf(authenticateSource(deps, api.id, { 'x-webhook-token': token }, {}))).toBe('unauthorized')
    expect(await codeOf(authenticateSource(deps, t.webhook.id, { 'x-webhook-token': t.sourceToken }, {}))).toBe('ok')
  })
})

describe('partner CRM behind the stored state', () => {
  const cfg = (cutover: number | null) => ({ ...deps, config: { ...deps.config, partnerCrmTokenCutover: cutover === null ? null : new Date(cutover) } })

  it("tokenRequired: the connection's switch, or the cutover instant reached", () => {
    expect(tokenRequired(cfg(null), { ...t.partner, require_token: true })).toBe(true)
    expect(tokenRequired(cfg(null), { ...t.partner, require_token: false })).toBe(false)
    expect(tokenRequired(cfg(null), t.partner)).toBe(false)
    expect(tokenRequired(cfg(T0), t.partner)).toBe(true)
    expect(tokenRequired(cfg(T0 + 1), t.partner)).toBe(false)
    expect(tokenRequired(cfg(T0 - 1), t.partner)).toBe(true)
  })

  it('refuseTokenlessEarly: 404 without an active partner CRM connection, 401 once tokens are required', async () => {
    await expect(refuseTokenlessEarly(cfg(null), t.account)).resolves.toBeUndefined()
    expect(await codeOf(refuseTokenlessEarly(cfg(T0), t.account))).toBe('unauthorized')
    await deps.tenants.updateConnection(t.partner.id, { require_token: true })
    expect(await codeOf(refuseTokenlessEarly(cfg(null), t.account))).toBe('unauthorized')
    await deps.tenants.updateConnection(t.partner.id, { require_token: false, active: false })
    // its other connections (api, webhook) are active: still no partner CRM connection
    expect(await codeOf(refuseTokenlessEarly(cfg(null), t.account))).toBe('not_found')
    await deps.tenants.updateConnection(t.partner.id, { active: true })
  })

  it('authenticatePartnerCrm: the token is checked against the location; no token after the cutover is 401', async () => {
    const auth = (headers: Record<string, string>, d = deps as never, locationId = t.locationId) =>
      authenticatePartnerCrm(d, t.account, locationId, headers, {})
    expect(await auth({ 'x-webhook-token': t.locationToken })).toMatchObject({
      tokenless: false,
      location: { location_id: t.locationId },
      connection: { id: t.partner.id },
    })
    expect(await codeOf(auth({ 'x-webhook-token': other.locationToken }))).toBe('unauthorized')
    expect(await codeOf(auth({ 'x-webhook-token': '' }))).toBe('unauthorized')
    expect(await auth({})).toMatchObject({ tokenless: true })
    expect(await codeOf(auth({}, cfg(T0) as never))).toBe('unauthorized')
    expect(await codeOf(auth({ 'x-webhook-token': t.locationToken }, deps as never, 'x'.repeat(257)))).toBe('not_found')
    expect(await codeOf(auth({ 'x-webhook-token': t.locationToken }, deps as never, 'x'.repeat(256)))).toBe('not_found')
  })

  it("authenticatePartnerCrm: a location that is inactive, or on a connection that is not this account's partner CRM one, is 404", async () => {
    const base = {
      account_id: t.account.id,
      token_hashes: [{ hash: hashSecret(TEST_PEPPER, 'lst_odd'), expires_at: null }],
      active: true,
      created_at: '',
      updated_at: '',
    }
    await deps.tenants.putLocation({ ...base, location_id: `on-api-${T0}`, connection_id: t.api.id })
    await deps.tenants.putLocation({ ...base, location_id: `on-other-${T0}`, connection_id: other.partner.id })
    await deps.tenants.putLocation({ ...base, location_id: `gone-${T0}`, connection_id: t.partner.id, active: false })
    for (const id of [`on-api-${T0}`, `on-other-${T0}`, `gone-${T0}`]) {
      expect(await codeOf(authenticatePartnerCrm(deps, t.account, id, { 'x-webhook-token': 'lst_odd' }, {})), id).toBe('not_found')
      expect(await identifyPartnerCrmToken(deps, t.account, 'lst_odd'), id).toBeNull()
    }
  })

  it('identifyPartnerCrmToken: the location of a valid token; null for blank, over-long, unknown or expired ones', async () => {
    expect(await identifyPartnerCrmToken(deps, t.account, t.locationToken)).toMatchObject({
      location: { location_id: t.locationId },
      connection: { id: t.partner.id },
    })
    expect(await identifyPartnerCrmToken(deps, t.account, '')).toBeNull()
    expect(await identifyPartnerCrmToken(deps, t.account, 'x'.repeat(257))).toBeNull()
    expect(await identifyPartnerCrmToken(deps, t.account, other.locationToken)).toBeNull()
    // a 256-character token is looked up (and matches when it is the location's)
    const long = 'l'.repeat(256)
    const loc = {
      account_id: t.account.id,
      connection_id: t.partner.id,
      location_id: `long-${T0}`,
      token_hashes: [{ hash: hashSecret(TEST_PEPPER, long), expires_at: null }],
      active: true,
      created_at: '',
      updated_at: '',
    }
    await deps.tenants.putLocation(loc)
    expect(await identifyPartnerCrmToken(deps, t.account, long)).toMatchObject({ location: { location_id: loc.location_id } })
    // a rotated-out hash past its grace is still indexed, but no longer identifies
    const old = 'lst_rotated-out'
    await deps.tenants.putLocation({
      ...loc,
      location_id: `rotated-${T0}`,
      token_hashes: [{ hash: hashSecret(TEST_PEPPER, old), expires_at: new Date(T0).toISOString() }],
    })
    expect(await identifyPartnerCrmToken(deps, t.account, old)).toBeNull()
  })

  it('authenticatePartnerCrm: what identifyPartnerCrmToken found stands when the body names that location', async () => {
    const identified = {
      connection: t.partner,
      location: {
        account_id: t.account.id,
        connection_id: t.partner.id,
        location_id: 'identified-only',
        token_hashes: [],
        active: true,
        created_at: '',
        updated_at: '',
      },
    }
    expect(await authenticatePartnerCrm(deps, t.account, 'identified-only', {}, {}, identified)).toEqual({ ...identified, tokenless: false })
    // another location named by the body: the body's location decides
    expect(await codeOf(authenticatePartnerCrm(deps, t.account, 'not-stored', { 'x-webhook-token': t.locationToken }, {}, identified))).toBe('not_found')
  })
})

/** deps whose tenant lookups (what the credential checks read) count (or rewrite) the given reads */
function spying<K extends 'getConnection' | 'getAccount' | 'getLocation' | 'findLocationByTokenHash'>(method: K, replace?: (...args: never[]) => unknown) {
  const calls: unknown[][] = []
  const tenantLookups = Object.create(deps.tenantLookups) as typeof deps.tenantLookups
  const original = (deps.tenantLookups[method] as (...a: unknown[]) => unknown).bind(deps.tenantLookups)
  ;(tenantLookups as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
    calls.push(args)
    return replace ? (replace as (...a: unknown[]) => unknown)(...args) : original(...args)
  }
  return { d: { ...deps, tenantLookups } as typeof deps, calls }
}

describe('reads the credential checks save, and stores that answer more than they should', () => {
  it('a source id that cannot exist (empty, over 128 characters) is never looked up', async () => {
    const { d, calls } = spying('getConnection')
    for (const id of ['', 'x'.repeat(129)]) expect(await codeOf(authenticateSource(d, id, { 'x-webhook-token': t.sourceToken }, {}))).toBe('unauthorized')
    expect(calls).toEqual([])
    expect(await codeOf(authenticateSource(d, 'x'.repeat(128), { 'x-webhook-token': t.sourceToken }, {}))).toBe('unauthorized')
    expect(calls).toEqual([['x'.repeat(128)]])
  })

  it('the account the caller already holds is not read again', async () => {
    const { d, calls } = spying('getAccount')
    expect(await codeOf(authenticateSource(d, t.webhook.id, { 'x-webhook-token': t.sourceToken }, {}, t.account))).toBe('ok')
    expect(calls).toEqual([])
    expect(await codeOf(authenticateSource(d, t.webhook.id, { 'x-webhook-token': t.sourceToken }, {}))).toBe('ok')
    expect(calls).toEqual([[t.account.id]])
  })

  it('a blank or over-long partner CRM token is never looked up; one of 256 characters is', async () => {
    const { d, calls } = spying('findLocationByTokenHash')
    expect(await identifyPartnerCrmToken(d, t.account, '')).toBeNull()
    expect(await identifyPartnerCrmToken(d, t.account, 'x'.repeat(257))).toBeNull()
    expect(calls).toEqual([])
    await identifyPartnerCrmToken(d, t.account, 'x'.repeat(256))
    expect(calls).toHaveLength(1)
  })

  it('a missing or over-long location id is never looked up; one of 256 characters is', async () => {
    const { d, calls } = spying('getLocation')
    expect(await codeOf(authenticatePartnerCrm(d, t.account, null, { 'x-webhook-token': t.locationToken }, {}))).toBe('not_found')
    expect(await codeOf(authenticatePartnerCrm(d, t.account, 'x'.repeat(257), { 'x-webhook-token': t.locationToken }, {}))).toBe('not_found')
    expect(calls).toEqual([])
    expect(await codeOf(authenticatePartnerCrm(d, t.account, 'x'.repeat(256), { 'x-webhook-token': t.locationToken }, {}))).toBe('not_found')
    expect(calls).toEqual([[t.account.id, 'x'.repeat(256)]])
  })

  it("a store answering with another account's location is not believed", async () => {
    // another account's location, pointing at this account's connection: only its account_id tells
    const foreign = { ...(await deps.tenants.getLocation(other.account.id, other.locationId))!, connection_id: t.partner.id }
    const byHash = spying('findLocationByTokenHash', () => Promise.resolve(foreign))
    expect(await identifyPartnerCrmToken(byHash.d, t.account, other.locationToken)).toBeNull()
    const byId = spying('getLocation', () => Promise.resolve(foreign))
    expect(await codeOf(authenticatePartnerCrm(byId.d, t.account, other.locationId, { 'x-webhook-token': other.locationToken }, {}))).toBe('not_found')
  })

  it('a call without a token is accepted before the cutover and flagged in the logs', async () => {
    const warnings: Array<[unknown, string]> = []
    const logger = {
      ...deps.logger,
      warn: (obj: unknown, msg: string) => {
        warnings.push([obj, msg])
      },
    }
    expect(await authenticatePartnerCrm({ ...deps, logger } as never, t.account, t.locationId, {}, {})).toMatchObject({ tokenless: true })
    expect(warnings).toEqual([
      [
        { accountId: t.account.id, locationId: t.locationId, connectionId: t.partner.id, flag: 'partnercrm_tokenless' },
        'partner CRM webhook call without a token accepted (before the tokenized-URL cutover)',
      ],
    ])
  })
})
