import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contactIdFor } from '@lsv/shared/model/ids.ts'
import { mergeContact } from '@lsv/shared/domain/contacts/merge.ts'
import type { App } from '@lsv/shared/http/base-app.ts'
import { buildApp } from '../../services/portal-api/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { randomSuffix } from '../helpers/embedded.ts'
import { ACCOUNT_ONLY, createTestTenant, issuedKey, type ManagedTenant } from '../helpers/tenant.ts'
import { contractValidator } from './schema.ts'

type Deps = Awaited<ReturnType<typeof createTestDeps>>
const OP = { authorization: 'Bearer test-operator-token' }

describe('read contract and delivery admin routes (portal-api)', () => {
  let deps: Deps
  let app: App
  let tenant: ManagedTenant
  let accountId: string
  let readKey: string
  let writeOnlyKey: string
  let contactId: string
  const ids: string[] = []

  beforeAll(async () => {
    deps = await createTestDeps()
    app = await buildApp(deps)
    await app.ready()
    // permitting tiers 1 and 2, no domains; an api connection mapping Plan to a custom field, a
    // key reading only and one with the default scopes (contacts:write); two text custom fields
    tenant = await createTestTenant(
      { managementApi: app, deps },
      {
        ...ACCOUNT_ONLY,
        permittedTiers: [1, 2],
        customFields: [
          { key: 'plan', type: 'text' },
          { key: 'region', type: 'text' },
        ],
        api: { source: 'crm', mappings: [{ from: 'Plan', to: 'custom_fields.plan' }], key: { scopes: ['contacts:read'] }, keys: { writeOnly: {} } },
      },
    )
    accountId = tenant.accountId
    readKey = tenant.key
    writeOnlyKey = issuedKey(tenant, 'writeOnly')
    const inputs = Array.from({ length: 5 }, (_, i) => ({
      source: 'crm',
      external_id: `ext-${i}`,
      writer: 'form' as const,
      at: '2026-09-01T00:00:00.000Z',
      origin: `seed-${i}`,
      patch: {
        identity: { first_name: `P${i}` },
        emails: [{ value: `p${i}@home.example`, kind: 'personal', verified: null }],
        traits: [{ key: 'age', label: 'Age', value: '30-39', group: 'demographics' as const }],
        custom_fields: { plan: { value: 'gold', source: 'inbound_mapping' as const, enriched_at: null } },
      },
    }))
    await deps.contacts.upsertBatch(accountId, inputs, mergeContact)
    for (let i = 0; i < 5; i++) ids.push(contactIdFor(accountId, 'crm', `ext-${i}`))
    contactId = ids[0]!
  })
  afterAll(async () => {
    await app.close()
    await tenant.cleanup()
    await deps.cleanup()
  })

  const get = (url: string, key = readKey) => app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } })

  it('GET /api/v1/contacts/{id} returns a schema-valid Contact with tier 1 only by default', async () => {
    const res = await get(`/api/v1/contacts/${contactId}`)
    expect(res.statusCode).toBe(200)
    const c = res.json()
    ;(await contractValidator()).assertContact(c)
    expect(c.id).toBe(contactId)
    expect(c.custom_fields.map((f: { key: string }) => f.key)).toEqual(['plan'])
    expect(c.missing['custom_fields.region']).toBe('unmapped')
    expect(c.handles.emails).toEqual([])
    expect(c.missing['handles.emails']).toBe('withheld_tier')
    expect(c.links.self).toBe(`${deps.config.portalBaseUrl}/api/v1/contacts/${contactId}`)
  })

  it('include=contact_handles releases tier 2; a tier the account is not permitted stays withheld_tier', async () => {
    const res = await get(`/api/v1/contacts/${contactId}?include=contact_handles,sensitive_traits`)
    expect(res.statusCode).toBe(200)
    const c = res.json()
    expect(c.handles.emails).toEqual([{ value: 'p0@home.example', kind: 'personal', verified: null }])
    expect(c.traits).toEqual([])
    expect(c.missing['traits.age']).toBe('withheld_tier')
  })

  it.each(['custom_fields', 'contact_handles,custom_fields', 'everything', '', 'contact_handles,', 'CONTACT_HANDLES'])(
    'include=%s answers 400 invalid include',
    async (include) => {
      const res = await get(`/api/v1/contacts/${contactId}?include=${encodeURIComponent(include)}`)
      expect(res.statusCode).toBe(400)
      expect(res.json()).toEqual({ ok: false, error: 'invalid include' })
      const list = await get(`/api/v1/contacts?include=${encodeURIComponent(include)}`)
      expect(list.statusCode).toBe(400)
      expect(list.json()).toEqual({ ok: false, error: 'invalid include' })
    },
  )

  it('needs a key with contacts:read; an unknown contact is 404 contact not found', async () => {
    expect((await app.inject({ method: 'GET', url: `/api/v1/contacts/${contactId}` })).statusCode).toBe(401)
    expect((await get(`/api/v1/contacts/${contactId}`, 'lsk_wrong')).statusCode).toBe(401)
    expect((await get(`/api/v1/contacts/${contactId}`, writeOnlyKey)).statusCode).toBe(403)
    const missing = await get(`/api/v1/contacts/${contactIdFor(accountId, 'crm', 'nobody')}`)
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toEqual({ ok: false, error: 'contact not found' })
  })

  it('GET /api/v1/contacts pages with an opaque keyset cursor until has_more is false', async () => {
    const seen: string[] = []
    let cursor: string | null = null
    const validator = await contractValidator()
    for (let i = 0; i < 5; i++) {
      const res = await get(`/api/v1/contacts?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
      expect(res.statusCode).toBe(200)
      const page = res.json()
      validator.assertContactList(page)
      seen.push(...page.data.map((c: { id: string }) => c.id))
      expect(page.has_more).toBe(page.next_cursor !== null)
      cursor = page.next_cursor
      if (!page.has_more) break
    }
    expect(seen).toEqual([...ids].sort())
    expect((await get('/api/v1/contacts?cursor=not-ours')).json()).toEqual({ ok: false, error: 'invalid cursor' })
    expect((await get('/api/v1/contacts?limit=0')).statusCode).toBe(400)
  })

  it('POST …/visits validates and answers 202; the delivery log and replay need an operator', async () => {
    const ok = await app.inject({
      method: 'POST',
      url: `/api/v1/admin/accounts/${accountId}/visits`,
      headers: OP,
      payload: { id: `visit_${randomSuffix()}`, tier: 'person', contact_id: contactId },
    })
    expect(ok.statusCode).toBe(202)
    const bad = await app.inject({ method: 'POST', url: `/api/v1/admin/accounts/${accountId}/visits`, headers: OP, payload: { id: 'x', tier: 'vip' } })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().error).toBe('invalid payload')
    expect(
      (await app.inject({ method: 'POST', url: `/api/v1/admin/accounts/${accountId}/visits`, payload: { id: 'x', tier: 'person', contact_id: 'c' } }))
        .statusCode,
    ).toBe(401)
    expect((await app.inject({ method: 'GET', url: `/api/v1/admin/accounts/${accountId}/integrations/int_nope/deliveries`, headers: OP })).statusCode).toBe(404)
  })

  it('POST …/visits refuses what the dispatcher could only skip: an lsv that is no link token (400), an inactive account (409)', async () => {
    const visit = (body: Record<string, unknown>, account = accountId) =>
      app.inject({
        method: 'POST',
        url: `/api/v1/admin/accounts/${account}/visits`,
        headers: OP,
        payload: { id: `visit_${randomSuffix()}`, tier: 'person', ...body },
      })
    // an outside probe (2026-11-30): each of these answered 202 and was then dropped with a log line
    for (const lsv of ['hello', 'a.short', 's.k1.only-three', '']) {
      const res = await visit({ lsv })
      expect(res.statusCode, lsv).toBe(400)
      expect(res.json().error).toBe('invalid payload')
      if (lsv !== '') expect(res.json().issues).toEqual([{ code: 'format', message: 'is not a link token (a.… or s.…)', path: '/lsv' }])
    }
    // a token of the right shape that resolves to nothing cannot be told apart here: accepted
    expect((await visit({ lsv: `a.${'A'.repeat(43)}` })).statusCode).toBe(202)
    const other = await createTestTenant({ managementApi: app, deps }, ACCOUNT_ONLY)
    try {
      expect((await visit({ contact_id: contactId }, other.accountId)).statusCode).toBe(202)
      const off = await app.inject({ method: 'PATCH', url: `/api/v1/admin/accounts/${other.accountId}`, headers: OP, payload: { active: false } })
      expect(off.statusCode).toBe(200)
      const res = await visit({ contact_id: contactId }, other.accountId)
      expect(res.statusCode).toBe(409)
      expect(res.json()).toEqual({ ok: false, error: 'conflict' })
    } finally {
      await other.cleanup()
    }
  })
})
