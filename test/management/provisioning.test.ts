import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../services/portal-api/src/app.ts'
import type { App } from '@lsv/shared/http/base-app.ts'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { authenticateApiKey } from '@lsv/shared/domain/auth/authenticate-api-key.ts'
import { verifyLocationToken, verifySourceToken } from '@lsv/shared/domain/auth/verify-source-token.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { emulators, randomSuffix } from '../helpers/embedded.ts'
import { ACCOUNT_ONLY, createTestTenant, removeTenantData, type TenantSpec } from '../helpers/tenant.ts'
import { ADMIN, call, fails, ok, OPERATOR } from './harness.ts'
import { provisionEndToEnd, type Provisioned } from './flow.ts'

const clock = new ManualClock(Date.UTC(2026, 8, 4, 12, 0, 0))
let deps: Awaited<ReturnType<typeof createTestDeps>>
let app: App
let tenant: Provisioned
const accounts: string[] = []

/** A bare account of its own (the tests' tenant harness, through this management API). */
async function newAccount(spec: TenantSpec = {}): Promise<string> {
  const account = await createTestTenant({ managementApi: app, deps }, { ...ACCOUNT_ONLY, ...spec })
  accounts.push(account.accountId)
  return account.accountId
}

async function apiConnection(accountId: string): Promise<string> {
  return (await ok(app, 201, 'POST', `${ADMIN}/${accountId}/connections`, { type: 'api', source: 'crm' })).id
}

const works = async (key: string) => {
  try {
    await authenticateApiKey(deps, { 'x-api-key': key }, { scope: 'contacts:write' })
    return true
  } catch (err) {
    if ((err as { code?: string }).code === 'unauthorized') return false
    throw err
  }
}

beforeAll(async () => {
  deps = await createTestDeps({ clock })
  app = await buildApp(deps)
  tenant = await provisionEndToEnd(app, deps)
  accounts.push(tenant.accountId)
})

afterAll(async () => {
  for (const id of accounts) await removeTenantData(deps, id).catch(() => {})
  await app?.close()
  await deps?.cleanup()
})

describe('operator authentication', () => {
  const routes: Array<[Parameters<typeof call>[1], string, unknown]> = [
    ['POST', ADMIN, { public_id: 'x' }],
    ['POST', ADMIN, { not: 'valid' }],
    ['GET', `${ADMIN}/${randomUUID()}`, undefined],
    ['PATCH', `${ADMIN}/${randomUUID()}`, { active: 'nope' }],
    ['POST', `${ADMIN}/${randomUUID()}/connections`, { type: 'api' }],
    ['POST', `${ADMIN}/a/connections/c/keys`, {}],
    ['POST', `${ADMIN}/a/connections/c/keys/k/rotate`, {}],
    ['DELETE', `${ADMIN}/a/connections/c/keys/k`, undefined],
    ['POST', `${ADMIN}/a/connections/c/token/rotate`, {}],
    ['POST', `${ADMIN}/a/connections/c/locations`, { location_id: 'l' }],
    ['DELETE', `${ADMIN}/a/connections/c/locations/l`, undefined],
    ['POST', `${ADMIN}/a/connections/c/locations/l/token/rotate`, { grace_seconds: 'x' }],
    ['PUT', `${ADMIN}/a/authorized-domains`, { domains: 'bad' }],
    ['POST', `${ADMIN}/a/custom-fields`, { key: 'k', label: 'K', type: 'text' }],
    ['POST', `${ADMIN}/a/integrations`, { url: 'https://x.example.com', payload_version: 2 }],
    ['PATCH', `${ADMIN}/a/integrations/i`, {}],
    ['GET', `${ADMIN}/a/integrations/i/deliveries`, undefined],
    ['POST', `${ADMIN}/a/integrations/i/deliveries/d/replay`, undefined],
    ['POST', `${ADMIN}/a/visits`, { invalid: true }],
  ]

  it.each(routes)('%s %s answers 401 without a token, with a wrong one, and with a non-bearer scheme', async (method, url, payload) => {
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer wrong-token' },
      { authorization: 'Basic dGVzdC1vcGVyYXRvci10b2tlbg==' },
      { authorization: 'test-operator-token' },
    ]
    for (const headers of attempts) {
      const res = await fails(app, method, url, payload, headers)
      expect(res).toEqual({ status: 401, body: { ok: false, error: 'unauthorized' } })
    }
  })

  it('does not accept a tenant API key as the operator token', async () => {
    const res = await fails(app, 'GET', `${ADMIN}/${tenant.accountId}`, undefined, { authorization: `Bearer ${tenant.key}` })
    expect(res.status).toBe(401)
  })
})

describe('accounts', () => {
  it('answers 409 public_id taken, also when only the case differs', async () => {
    expect(await fails(app, 'POST', ADMIN, { public_id: tenant.publicId })).toEqual({ status: 409, body: { ok: false, error: 'public_id taken' } })
    expect((await fails(app, 'POST', ADMIN, { public_id: tenant.publicId.toUpperCase() })).status).toBe(409)
  })

  it('stores the public id lower-case and applies the defaults', async () => {
    const publicId = `Up-${randomSuffix(4)}`
    const a = await ok(app, 201, 'POST', ADMIN, { public_id: publicId, api_access: false, permitted_tiers: [3, 1] })
    accounts.push(a.id)
    expect(a).toMatchObject({ public_id: publicId.toLowerCase(), api_access: false, permitted_tiers: [1, 3], name: null, active: true })
  })

  it('refuses a public id that is not a DNS label, unknown members and bad tiers with issues', async () => {
    for (const public_id of ['-acme', 'acme-', 'ac_me', 'a.b', '', 'x'.repeat(64), 'acmé']) {
      const res = await fails(app, 'POST', ADMIN, { public_id })
      expect(res.status, public_id).toBe(400)
      expect(res.body.error).toBe('invalid payload')
      expect(
        res.body.issues?.some((i) => i.path === '/public_id'),
        public_id,
      ).toBe(true)
    }
    const extra = await fails(app, 'POST', ADMIN, { public_id: `ok-${randomSuffix(3)}`, plan: 'gold' })
    expect(extra.status).toBe(400)
    expect(extra.body.issues).toContainEqual(expect.objectContaining({ code: 'additionalProperties', path: '/plan' }))
    const tiers = await fails(app, 'POST', ADMIN, { public_id: `ok-${randomSuffix(3)}`, permitted_tiers: [2, 3] })
    expect(tiers.status).toBe(400)
    expect(tiers.body.issues).toContainEqual(expect.objectContaining({ path: '/permitted_tiers' }))
    const bad = await fails(app, 'POST', ADMIN, { public_id: `ok-${randomSuffix(3)}`, permitted_tiers: [4] })
    expect(bad.status).toBe(400)
  })

  it('answers invalid JSON with 400 invalid JSON body', async () => {
    const res = await app.inject({ method: 'POST', url: ADMIN, headers: { ...OPERATOR, 'content-type': 'application/json' }, payload: '{"public_id":' })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({ ok: false, error: 'invalid JSON body' })
  })

  it('deactivates an account: its keys stop working', async () => {
    const accountId = await newAccount()
    const connectionId = await apiConnection(accountId)
    const { key } = await ok(app, 201, 'POST', `${ADMIN}/${accountId}/connections/${connectionId}/keys`, {})
    expect(await works(key)).toBe(true)
    expect(await ok(app, 200, 'PATCH', `${ADMIN}/${accountId}`, { active: false })).toMatchObject({ active: false })
    expect(await works(key)).toBe(false)
    await ok(app, 200, 'PATCH', `${ADMIN}/${accountId}`, { active: true })
    expect(await works(key)).toBe(true)
  })

  it('lists accounts page by page', async () => {
    const seen = new Set<string>()
    let after: string | null = null
    do {
      const page: { data: Array<{ id: string }>; next_after: string | null } = await ok(app, 200, 'GET', `${ADMIN}?limit=2${after ? `&after=${after}` : ''}`)
      expect(page.data.length).toBeLessThanOrEqual(2)
      for (const a of page.data) seen.add(a.id)
      after = page.next_after
    } while (after)
    expect(seen.has(tenant.accountId)).toBe(true)
  })

  it('answers 404 for an unknown account on every account-scoped operation', async () => {
    const base = `${ADMIN}/${randomUUID()}`
    const calls: Array<[Parameters<typeof call>[1], string, unknown]> = [
      ['GET', base, undefined],
      ['PATCH', base, { active: false }],
      ['POST', `${base}/connections`, { type: 'api' }],
      ['GET', `${base}/connections`, undefined],
      ['PUT', `${base}/authorized-domains`, { domains: ['example.com'] }],
      ['POST', `${base}/custom-fields`, { key: 'k', label: 'K', type: 'text' }],
      ['POST', `${base}/integrations`, { url: 'https://x.example.com/h', payload_version: 2 }],
      ['GET', `${base}/integrations`, undefined],
    ]
    for (const [method, url, payload] of calls) {
      expect(await fails(app, method, url, payload), `${method} ${url}`).toEqual({ status: 404, body: { ok: false, error: 'not found' } })
    }
  })
})

describe('connections', () => {
  it('defaults the source to the type, forces partnercrm, and checks the slug', async () => {
    const accountId = await newAccount()
    expect(await ok(app, 201, 'POST', `${ADMIN}/${accountId}/connections`, { type: 'api' })).toMatchObject({ source: 'api' })
    const bad = await fails(app, 'POST', `${ADMIN}/${accountId}/connections`, { type: 'api', source: 'Bad Slug' })
    expect(bad.status).toBe(400)
    expect(bad.body.issues).toContainEqual(expect.objectContaining({ path: '/source' }))
    expect((await fails(app, 'POST', `${ADMIN}/${accountId}/connections`, { type: 'partnercrm', source: 'other' })).status).toBe(400)
    expect((await fails(app, 'POST', `${ADMIN}/${accountId}/connections`, { type: 'webhook', source: 'partnercrm' })).status).toBe(400)
    expect((await fails(app, 'POST', `${ADMIN}/${accountId}/connections`, { type: 'ftp' })).status).toBe(400)
    await ok(app, 201, 'POST', `${ADMIN}/${accountId}/connections`, { type: 'partnercrm', source: 'partnercrm' })
    expect((await fails(app, 'POST', `${ADMIN}/${accountId}/connections`, { type: 'partnercrm' })).status).toBe(409)
  })

  it('validates field mappings: targets and keys; custom fields may be defined later', async () => {
    const accountId = await newAccount()
    const url = `${ADMIN}/${accountId}/connections`
    const badTarget = await fails(app, 'POST', url, { type: 'api', field_mappings: [{ from: 'x', to: 'phone' }] })
    expect(badTarget.status).toBe(400)
    expect(badTarget.body.issues).toContainEqual(expect.objectContaining({ path: '/field_mappings/0/to' }))
    const badKey = await fails(app, 'POST', url, {
      type: 'api',
      field_mappings: [
        { from: 'x', to: 'email' },
        { from: 'y', to: 'custom_fields.Bad-Key' },
      ],
    })
    expect(badKey.body.issues).toContainEqual(expect.objectContaining({ path: '/field_mappings/1/to' }))
    const noKey = await fails(app, 'POST', url, { type: 'api', field_mappings: [{ from: '--', to: 'email' }] })
    expect(noKey.body.issues).toContainEqual(expect.objectContaining({ code: 'no_key', path: '/field_mappings/0/from' }))
    const extra = await fails(app, 'POST', url, { type: 'api', field_mappings: [{ from: 'a', to: 'email', note: 'x' }] })
    expect(extra.body.issues).toContainEqual(expect.objectContaining({ path: '/field_mappings/0/note' }))
    // one key may feed several targets, and a custom field may be defined after the mapping
    const early = await ok(app, 201, 'POST', url, {
      type: 'api',
      source: 'early',
      field_mappings: [
        { from: 'Mail', to: 'email' },
        { from: 'mail', to: 'custom_fields.work_mail' },
      ],
    })
    expect(early.field_mappings).toEqual([
      { from: 'Mail', to: 'email' },
      { from: 'mail', to: 'custom_fields.work_mail' },
    ])
    const c = await ok(app, 201, 'POST', url, { type: 'api', field_mappings: [{ from: 'Mail', to: 'email' }] })
    const patched = await ok(app, 200, 'PATCH', `${url}/${c.id}`, { active: false, field_mappings: [{ from: 'surname', to: 'last_name' }] })
    expect(patched).toMatchObject({ active: false, field_mappings: [{ from: 'surname', to: 'last_name' }], source: 'api' })
    expect((await fails(app, 'PATCH', `${url}/${c.id}`, { source: 'other' })).status).toBe(400)
  })

  it('answers 404 for a connection of another account', async () => {
    const other = await newAccount()
    const base = `${ADMIN}/${other}/connections/${tenant.apiConnectionId}`
    expect((await fails(app, 'GET', base)).status).toBe(404)
    expect((await fails(app, 'PATCH', base, { active: false })).status).toBe(404)
    expect((await fails(app, 'POST', `${base}/keys`, {})).status).toBe(404)
    expect((await fails(app, 'POST', `${base}/keys/${tenant.keyId}/rotate`, {})).status).toBe(404)
    expect((await fails(app, 'DELETE', `${base}/keys/${tenant.keyId}`)).status).toBe(404)
    expect((await fails(app, 'POST', `${ADMIN}/${other}/connections/${tenant.webhookConnectionId}/token/rotate`, {})).status).toBe(404)
    expect((await fails(app, 'POST', `${ADMIN}/${other}/connections/${tenant.partnerConnectionId}/locations`, { location_id: 'x' })).status).toBe(404)
    expect((await fails(app, 'GET', `${ADMIN}/${tenant.accountId}/connections/src_unknown`)).status).toBe(404)
    expect(await works(tenant.key)).toBe(true)
  })

  it('keeps each credential on its connection type (400 with an issue)', async () => {
    const base = `${ADMIN}/${tenant.accountId}/connections`
    for (const [url, payload] of [
      [`${base}/${tenant.webhookConnectionId}/keys`, {}],
      [`${base}/${tenant.partnerConnectionId}/keys`, {}],
      [`${base}/${tenant.apiConnectionId}/token/rotate`, {}],
      [`${base}/${tenant.partnerConnectionId}/token/rotate`, {}],
      [`${base}/${tenant.apiConnectionId}/locations`, { location_id: 'x' }],
      [`${base}/${tenant.webhookConnectionId}/locations`, { location_id: 'x' }],
    ] as const) {
      const res = await fails(app, 'POST', url, payload)
      expect(res.status, url).toBe(400)
      expect(res.body.issues, url).toContainEqual(expect.objectContaining({ code: 'connection_type' }))
    }
  })
})

describe('API keys', () => {
  it('grants contacts:write by default and refuses unknown scopes and past expiry', async () => {
    const accountId = await newAccount()
    const keys = `${ADMIN}/${accountId}/connections/${await apiConnection(accountId)}/keys`
    const k = await ok(app, 201, 'POST', keys)
    expect(k.scopes).toEqual(['contacts:write'])
    await expect(authenticateApiKey(deps, { 'x-api-key': k.key }, { scope: 'contacts:links:write' })).rejects.toMatchObject({ code: 'forbidden' })
    const scope = await fails(app, 'POST', keys, { scopes: ['contacts:delete'] })
    expect(scope.status).toBe(400)
    expect(scope.body.issues?.[0]?.path).toMatch(/^\/scopes/)
    expect((await fails(app, 'POST', keys, { scopes: [] })).status).toBe(400)
    const past = await fails(app, 'POST', keys, { expires_at: new Date(clock.now() - 1000).toISOString() })
    expect(past.body.issues).toContainEqual(expect.objectContaining({ path: '/expires_at' }))
  })

  it('shows the key once and stores it only hashed', async () => {
    const res = await ok(app, 200, 'GET', `${ADMIN}/${tenant.accountId}/connections/${tenant.apiConnectionId}/keys/${tenant.keyId}`)
    expect(res).toMatchObject({ id: tenant.keyId, prefix: tenant.key.slice(0, 12) })
    expect(res).not.toHaveProperty('key')
    expect(res).not.toHaveProperty('hash')
    const everything = JSON.stringify([
      await deps.tenants.getAccount(tenant.accountId),
      await deps.tenants.listConnections(tenant.accountId),
      await deps.tenants.getApiKey(tenant.keyId),
      await deps.tenants.getLocation(tenant.accountId, tenant.locationId),
      await deps.tenants.listIntegrations(tenant.accountId),
    ])
    for (const secret of [tenant.key, tenant.sourceToken, tenant.locationToken]) expect(everything).not.toContain(secret)
  })

  it('honours an expiry', async () => {
    const accountId = await newAccount()
    const keys = `${ADMIN}/${accountId}/connections/${await apiConnection(accountId)}/keys`
    const k = await ok(app, 201, 'POST', keys, { expires_at: new Date(clock.now() + 60_000).toISOString() })
    expect(await works(k.key)).toBe(true)
    clock.advance(60_000)
    expect(await works(k.key)).toBe(false)
  })

  it('rotates: same scopes, the old key works until the grace ends, then 401', async () => {
    const accountId = await newAccount()
    const keys = `${ADMIN}/${accountId}/connections/${await apiConnection(accountId)}/keys`
    const old = await ok(app, 201, 'POST', keys, { scopes: ['contacts:write', 'contacts:read'] })
    const rotated = await ok(app, 201, 'POST', `${keys}/${old.id}/rotate`, { grace_seconds: 3600 })
    expect(rotated.key).not.toBe(old.key)
    expect(rotated.id).not.toBe(old.id)
    expect(rotated.scopes).toEqual(['contacts:write', 'contacts:read'])
    expect(rotated.previous).toEqual({ id: old.id, revoked_at: new Date(clock.now() + 3_600_000).toISOString() })
    clock.advance(3_599_000)
    expect(await works(old.key)).toBe(true)
    expect(await works(rotated.key)).toBe(true)
    clock.advance(1000)
    expect(await works(old.key)).toBe(false)
    expect(await works(rotated.key)).toBe(true)
    // a key past its grace cannot be rotated again
    expect((await fails(app, 'POST', `${keys}/${old.id}/rotate`, {})).status).toBe(409)
  })

  it('rotates with the default grace of one day when no body is sent', async () => {
    const accountId = await newAccount()
    const keys = `${ADMIN}/${accountId}/connections/${await apiConnection(accountId)}/keys`
    const old = await ok(app, 201, 'POST', keys, {})
    const rotated = await ok(app, 201, 'POST', `${keys}/${old.id}/rotate`)
    expect(rotated.previous.revoked_at).toBe(new Date(clock.now() + 86_400_000).toISOString())
    expect((await fails(app, 'POST', `${keys}/${old.id}/rotate`, { grace_seconds: -1 })).status).toBe(400)
    expect((await fails(app, 'POST', `${keys}/${old.id}/rotate`, { grace_seconds: 'soon' })).status).toBe(400)
  })

  it('treats an empty body with a JSON content type as no body where the body is optional', async () => {
    const accountId = await newAccount()
    const keys = `${ADMIN}/${accountId}/connections/${await apiConnection(accountId)}/keys`
    const headers = { ...OPERATOR, 'content-type': 'application/json' }
    const created = await app.inject({ method: 'POST', url: keys, headers })
    expect(created.statusCode, created.body).toBe(201)
    const rotated = await app.inject({ method: 'POST', url: `${keys}/${created.json().id}/rotate`, headers })
    expect(rotated.statusCode, rotated.body).toBe(201)
    const revoked = await app.inject({ method: 'DELETE', url: `${keys}/${rotated.json().id}`, headers })
    expect(revoked.statusCode, revoked.body).toBe(204)
    // where a body is required, an empty one stays a JSON error
    const account = await app.inject({ method: 'POST', url: ADMIN, headers })
    expect(account.json()).toEqual({ ok: false, error: 'invalid JSON body' })
  })

  it('revokes at once by default, or after grace_seconds; revocation never extends', async () => {
    const accountId = await newAccount()
    const keys = `${ADMIN}/${accountId}/connections/${await apiConnection(accountId)}/keys`
    const a = await ok(app, 201, 'POST', keys, {})
    const b = await ok(app, 201, 'POST', keys, {})
    expect(await ok(app, 204, 'DELETE', `${keys}/${a.id}`)).toBeNull()
    expect(await works(a.key)).toBe(false)
    expect(await works(b.key)).toBe(true)
    await ok(app, 204, 'DELETE', `${keys}/${b.id}?grace_seconds=120`)
    await ok(app, 204, 'DELETE', `${keys}/${b.id}?grace_seconds=9999`)
    clock.advance(119_000)
    expect(await works(b.key)).toBe(true)
    clock.advance(1000)
    expect(await works(b.key)).toBe(false)
    await ok(app, 204, 'DELETE', `${keys}/${a.id}`)
    expect((await ok(app, 200, 'GET', `${keys}/${a.id}`)).revoked_at).not.toBeNull()
    expect((await fails(app, 'DELETE', `${keys}/key_unknown`)).status).toBe(404)
    expect((await fails(app, 'DELETE', `${keys}/${a.id}?grace_seconds=abc`)).status).toBe(400)
  })
})

describe('source token rotation', () => {
  it('issues a new token; the old one works during the grace only', async () => {
    const accountId = await newAccount()
    const c = await ok(app, 201, 'POST', `${ADMIN}/${accountId}/connections`, { type: 'webhook', source: 'forms' })
    const rotated = await ok(app, 201, 'POST', `${ADMIN}/${accountId}/connections/${c.id}/token/rotate`, { grace_seconds: 600 })
    expect(rotated.token).not.toBe(c.token)
    expect(rotated.webhook_url).toBe(c.webhook_url)
    expect(rotated.previous_expires_at).toBe(new Date(clock.now() + 600_000).toISOString())
    const check = async (token: string) => verifySourceToken(deps, (await deps.tenants.getConnection(c.id))!, token)
    expect(await check(c.token)).toBe(true)
    expect(await check(rotated.token)).toBe(true)
    clock.advance(600_000)
    expect(await check(c.token)).toBe(false)
    expect(await check(rotated.token)).toBe(true)
    // with grace 0 the previous token stops at once
    const again = await ok(app, 201, 'POST', `${ADMIN}/${accountId}/connections/${c.id}/token/rotate`, { grace_seconds: 0 })
    expect(await check(rotated.token)).toBe(false)
    expect(await check(again.token)).toBe(true)
    expect((await deps.tenants.getConnection(c.id))!.token_hashes).toHaveLength(1)
  })
})

describe('partner CRM locations', () => {
  it('adds, refuses a duplicate, removes, and re-adds with a new token', async () => {
    const accountId = await newAccount()
    const partner = await ok(app, 201, 'POST', `${ADMIN}/${accountId}/connections`, { type: 'partnercrm' })
    const url = `${ADMIN}/${accountId}/connections/${partner.id}/locations`
    const first = await ok(app, 201, 'POST', url, { location_id: 'LOC-1' })
    expect(first.location_id).toBe('LOC-1')
    expect(await fails(app, 'POST', url, { location_id: 'LOC-1' })).toEqual({ status: 409, body: { ok: false, error: 'conflict' } })
    expect((await fails(app, 'POST', url, { location_id: 'has space' })).status).toBe(400)
    expect((await fails(app, 'POST', url, {})).status).toBe(400)
    expect(await ok(app, 204, 'DELETE', `${url}/LOC-1`)).toBeNull()
    expect((await deps.tenants.getLocation(accountId, 'LOC-1'))?.active).toBe(false)
    await ok(app, 204, 'DELETE', `${url}/LOC-1`)
    expect((await fails(app, 'DELETE', `${url}/LOC-2`)).status).toBe(404)
    const again = await ok(app, 201, 'POST', url, { location_id: 'LOC-1' })
    expect(again.token).not.toBe(first.token)
    expect(await verifyLocationToken(deps, (await deps.tenants.getLocation(accountId, 'LOC-1'))!, first.token)).toBe(false)
    // the location id is taken for the account's other connection too
    expect(
      (await fails(app, 'POST', `${ADMIN}/${tenant.accountId}/connections/${tenant.partnerConnectionId}/locations`, { location_id: tenant.locationId })).status,
    ).toBe(409)
  })
})

describe('partner CRM location token rotation', () => {
  it('issues a new token; the old one works during the grace only; inactive locations are 404', async () => {
    const accountId = await newAccount()
    const partner = await ok(app, 201, 'POST', `${ADMIN}/${accountId}/connections`, { type: 'partnercrm' })
    const url = `${ADMIN}/${accountId}/connections/${partner.id}/locations`
    const loc = await ok(app, 201, 'POST', url, { location_id: 'L9' })
    const rotated = await ok(app, 201, 'POST', `${url}/L9/token/rotate`, { grace_seconds: 30 })
    expect(rotated).toMatchObject({ location_id: 'L9', webhook_url: loc.webhook_url, previous_expires_at: new Date(clock.now() + 30_000).toISOString() })
    const check = async (token: string) => verifyLocationToken(deps, (await deps.tenants.getLocation(accountId, 'L9'))!, token)
    expect(await check(loc.token)).toBe(true)
    expect(await check(rotated.token)).toBe(true)
    clock.advance(30_000)
    expect(await check(loc.token)).toBe(false)
    expect(await check(rotated.token)).toBe(true)
    await ok(app, 204, 'DELETE', `${url}/L9`)
    expect((await fails(app, 'POST', `${url}/L9/token/rotate`)).status).toBe(404)
    expect((await fails(app, 'POST', `${url}/nope/token/rotate`, {})).status).toBe(404)
  })
})

describe('authorized domains', () => {
  it('normalizes: lower case, no trailing dot, punycode, duplicates once', async () => {
    const accountId = await newAccount()
    const res = await ok(app, 200, 'PUT', `${ADMIN}/${accountId}/authorized-domains`, {
      domains: ['Shop.Example.COM.', 'münchen.de', 'xn--mnchen-3ya.de', ' spaced.example '],
    })
    expect(res).toEqual({ domains: ['shop.example.com', 'xn--mnchen-3ya.de', 'spaced.example'] })
    expect((await ok(app, 200, 'GET', `${ADMIN}/${accountId}`)).authorized_domains).toEqual(res.domains)
    expect(await ok(app, 200, 'PUT', `${ADMIN}/${accountId}/authorized-domains`, { domains: [] })).toEqual({ domains: [] })
  })

  it('refuses IPs, URLs, ports, wildcards and single labels with one issue per entry', async () => {
    const accountId = await newAccount()
    const bad = ['1.2.3.4', '[::1]', 'https://example.com', 'example.com:8080', '*.example.com', 'localhost', 'a..b.com', '-x.example.com', 'example.com/path']
    const res = await fails(app, 'PUT', `${ADMIN}/${accountId}/authorized-domains`, { domains: ['fine.example', ...bad] })
    expect(res.status).toBe(400)
    expect(res.body.issues?.map((i) => i.path)).toEqual(bad.map((_, i) => `/domains/${i + 1}`))
    expect((await ok(app, 200, 'GET', `${ADMIN}/${accountId}/authorized-domains`)).domains).toEqual([])
    expect((await fails(app, 'PUT', `${ADMIN}/${accountId}/authorized-domains`, { domains: 'example.com' })).status).toBe(400)
  })
})

describe('custom fields', () => {
  it('refuses an unknown type, a bad key and a duplicate key', async () => {
    const accountId = await newAccount()
    const url = `${ADMIN}/${accountId}/custom-fields`
    const type = await fails(app, 'POST', url, { key: 'k', label: 'K', type: 'color' })
    expect(type.status).toBe(400)
    expect(type.body.issues).toContainEqual(expect.objectContaining({ path: '/type' }))
    for (const key of ['1abc', 'Abc', 'a-b', '', 'a'.repeat(65)])
      expect((await fails(app, 'POST', url, { key, label: 'K', type: 'text' })).status, key).toBe(400)
    await ok(app, 201, 'POST', url, { key: 'plan', label: 'Plan', type: 'select' })
    expect((await fails(app, 'POST', url, { key: 'plan', label: 'Plan again', type: 'text' })).status).toBe(409)
  })
})

describe('integrations', () => {
  it('refuses bad URLs and tiers the account may not enable', async () => {
    const accountId = await newAccount({ permittedTiers: [1] })
    const url = `${ADMIN}/${accountId}/integrations`
    for (const bad of [
      'ftp://example.com/x',
      'not a url',
      'https://user:pw@example.com/',
      'https://10.0.0.1/hook',
      'https://169.254.169.254/',
      'https://metadata.internal/',
    ]) {
      const res = await fails(app, 'POST', url, { url: bad, payload_version: 2 })
      expect(res.status, bad).toBe(400)
      expect(res.body.issues, bad).toContainEqual(expect.objectContaining({ path: '/url' }))
    }
    expect((await fails(app, 'POST', url, { url: 'https://h.example.com/', payload_version: 3 })).status).toBe(400)
    const tier = await fails(app, 'POST', url, { url: 'https://h.example.com/', payload_version: 2, tiers: { sensitive_traits: true } })
    expect(tier.body.issues).toContainEqual(expect.objectContaining({ path: '/tiers/sensitive_traits', code: 'tier_not_permitted' }))
    const i = await ok(app, 201, 'POST', url, { url: 'https://h.example.com/', payload_version: 2 })
    expect(i.tiers).toEqual({ contact_handles: false, sensitive_traits: false })
    expect((await fails(app, 'PATCH', `${url}/${i.id}`, { tiers: { contact_handles: true } })).status).toBe(400)
  })

  it('updates, disables and re-enables; never shows the secret again; 404 across accounts', async () => {
    const accountId = await newAccount()
    const url = `${ADMIN}/${accountId}/integrations`
    const i = await ok(app, 201, 'POST', url, { url: 'https://a.example.com/hook', payload_version: 2 })
    await deps.tenants.updateIntegration(i.id, { active: false, disabled_reason: 'endpoint answered 410' })
    expect(await ok(app, 200, 'GET', `${url}/${i.id}`)).toMatchObject({ active: false, disabled_reason: 'endpoint answered 410' })
    const enabled = await ok(app, 200, 'PATCH', `${url}/${i.id}`, { active: true, url: 'https://b.example.com/hook' })
    expect(enabled).toMatchObject({ active: true, disabled_reason: null, url: 'https://b.example.com/hook' })
    expect(enabled).not.toHaveProperty('signing_secret')
    expect((await ok(app, 200, 'GET', url)).data).toEqual([enabled])
    const stored = await deps.tenants.getIntegration(i.id)
    expect(stored?.signing_secrets.map((s) => s.secret)).toEqual([i.signing_secret])
    expect((await fails(app, 'PATCH', `${ADMIN}/${tenant.accountId}/integrations/${i.id}`, { active: false })).status).toBe(404)
    expect((await fails(app, 'GET', `${url}/int_unknown`)).status).toBe(404)
    expect((await fails(app, 'PATCH', `${url}/${i.id}`, { signing_secret: 'x' })).status).toBe(400)
  })
})

describe('visits', () => {
  it('injects a visit event for a provisioned account', async () => {
    const res = await call(app, 'POST', `${ADMIN}/${tenant.accountId}/visits`, {
      id: `evt-${randomSuffix(6)}`,
      tier: 'company',
      visit: { captured_url: 'https://example.com/' },
      resolution: { company: { name: 'Acme' }, resolved_by: 'test' },
    })
    expect(res.statusCode, res.body).toBe(202)
  })
})

describe.skipIf(!emulators.firestore || !emulators.pubsub)('on the emulators', () => {
  let edeps: Awaited<ReturnType<typeof createTestDeps>>
  let eapp: App
  let provisioned: Provisioned | undefined

  beforeAll(async () => {
    edeps = await createTestDeps({ backend: 'emulators' })
    eapp = await buildApp(edeps)
  })
  afterAll(async () => {
    if (provisioned) await edeps.tenants.deleteAccountData(provisioned.accountId).catch(() => {})
    await eapp?.close()
    await edeps?.cleanup()
  })

  it('provisions a tenant end to end', async () => {
    provisioned = await provisionEndToEnd(eapp, edeps)
    expect((await fails(eapp, 'POST', ADMIN, { public_id: provisioned.publicId })).status).toBe(409)
    const keys = `${ADMIN}/${provisioned.accountId}/connections/${provisioned.apiConnectionId}/keys`
    const rotated = await ok(eapp, 201, 'POST', `${keys}/${provisioned.keyId}/rotate`, { grace_seconds: 0 })
    await expect(authenticateApiKey(edeps, { 'x-api-key': provisioned.key }, { scope: 'contacts:write' })).rejects.toMatchObject({ code: 'unauthorized' })
    expect((await authenticateApiKey(edeps, { 'x-api-key': rotated.key }, { scope: 'contacts:write' })).key.id).toBe(rotated.id)
    await ok(eapp, 204, 'DELETE', `${ADMIN}/${provisioned.accountId}/connections/${provisioned.partnerConnectionId}/locations/${provisioned.locationId}`)
    expect((await edeps.tenants.getLocation(provisioned.accountId, provisioned.locationId))?.active).toBe(false)
  })
})
