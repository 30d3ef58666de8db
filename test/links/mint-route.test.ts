import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../services/portal-api/src/app.ts'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { Secrets } from '@lsv/shared/ports/secrets.ts'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { resolveLinkToken } from '@lsv/shared/domain/links/resolve.ts'
import { hashOpaqueToken } from '@lsv/shared/domain/links/opaque.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { createTestTenant, issuedKey, type ManagedTenant } from '../helpers/tenant.ts'
import { OPERATOR } from '../management/harness.ts'
import { seedContact } from './fixtures.ts'

const URL_PATH = '/api/contacts/links'
// the start of a minute, so a test's requests stay in one rate-limit window unless it moves the clock
const clock = new ManualClock(Date.UTC(2026, 8, 4, 12, 0, 0))

let deps: Awaited<ReturnType<typeof createTestDeps>>
let app: App
let tenant: ManagedTenant
let other: ManagedTenant
let contactA: string
let contactB: string
let foreignContact: string

/**
 * An account with these authorized domains and an api connection with three keys, through the
 * management API: the main key with contacts:links:write only, `write` with contacts:write only,
 * and `default` created without scopes (the API's default).
 */
function provision(domains: string[]): Promise<ManagedTenant> {
  return createTestTenant(
    { managementApi: app, deps },
    {
      authorizedDomains: domains,
      webhook: false,
      partner: false,
      api: { key: { scopes: ['contacts:links:write'] }, keys: { write: { scopes: ['contacts:write'] }, default: {} } },
    },
  )
}

function mint(payload: unknown, headers: Record<string, string> = { authorization: `Bearer ${tenant.key}` }, on: App = app) {
  return on.inject({ method: 'POST', url: URL_PATH, headers, payload: payload as object })
}

beforeAll(async () => {
  deps = await createTestDeps({ clock })
  app = await buildApp(deps)
  tenant = await provision(['example.com', 'shop.acme.io'])
  other = await provision(['other.example'])
  contactA = await seedContact(deps, tenant.accountId, 'crm', 'ext-a')
  contactB = await seedContact(deps, tenant.accountId, 'crm', 'ext-b')
  foreignContact = await seedContact(deps, other.accountId, 'crm', 'ext-a')
})

afterAll(async () => {
  await app?.close()
  if (deps) {
    for (const t of [tenant, other]) if (t) await t.cleanup()
    await deps.cleanup()
  }
})

describe('POST /api/contacts/links: success', () => {
  it('mints an opaque link by contactId (bearer key), stores only the hash, resolves back', async () => {
    const res = await mint({ destinationUrl: 'https://www.example.com/landing?utm=x#top', contactId: contactA })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(Object.keys(body).sort()).toEqual(['contactId', 'link', 'ok', 'token', 'type'])
    expect(body).toMatchObject({ ok: true, contactId: contactA, type: 'opaque' })
    expect(body.token).toMatch(/^a\.[A-Za-z0-9_-]{43}$/)
    expect(body.link).toBe(`https://www.example.com/landing?utm=x&lsv=${body.token}#top`)

    const record = await deps.linkTokens.get(hashOpaqueToken(body.token))
    expect(record).toMatchObject({ account_id: tenant.accountId, contact_id: contactA })
    expect(JSON.stringify(record)).not.toContain(body.token.slice(2))

    expect(await resolveLinkToken(deps, body.token)).toEqual({ accountId: tenant.accountId, contactId: contactA })
    expect(await resolveLinkToken(deps, body.token, { accountId: tenant.accountId })).toEqual({ accountId: tenant.accountId, contactId: contactA })
    expect(await resolveLinkToken(deps, body.token, { accountId: other.accountId })).toBeNull()
  })

  it('accepts the x-api-key form and names the contact by (source, externalId)', async () => {
    const res = await mint({ destinationUrl: 'https://shop.acme.io/cart', source: 'crm', externalId: 'ext-b' }, { 'x-api-key': tenant.key })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ contactId: contactB, type: 'opaque' })
  })

  it('contactId takes precedence over source/externalId', async () => {
    const res = await mint({ destinationUrl: 'https://example.com/', contactId: contactA, source: 'crm', externalId: 'ext-b' })
    expect(res.statusCode).toBe(200)
    expect(res.json().contactId).toBe(contactA)
    // even when the contactId matches nothing and the pair would
    const miss = await mint({ destinationUrl: 'https://example.com/', contactId: randomUUID(), source: 'crm', externalId: 'ext-b' })
    expect(miss.statusCode).toBe(404)
    expect(miss.json()).toEqual({ ok: false, error: 'contact not found' })
  })

  it('mints a signed link with exp, and it resolves until it expires', async () => {
    const res = await mint({ destinationUrl: 'https://example.com/?lsv=stale&a=1', contactId: contactA, type: 'signed', expSeconds: 600 })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.type).toBe('signed')
    const parts = body.token.split('.')
    expect(parts).toHaveLength(4)
    expect(parts[0]).toBe('s')
    const claims = JSON.parse(Buffer.from(parts[2], 'base64url').toString('utf8'))
    const iat = Math.floor(clock.now() / 1000)
    expect(claims).toEqual({ acc: tenant.accountId, sub: contactA, iat, exp: iat + 600 })
    expect(body.link).toBe(`https://example.com/?a=1&lsv=${body.token}`)

    expect(await resolveLinkToken(deps, body.token, { accountId: tenant.accountId })).toEqual({ accountId: tenant.accountId, contactId: contactA })
    expect(await resolveLinkToken(deps, body.token, { accountId: other.accountId })).toBeNull()
    const start = clock.now()
    try {
      clock.set(start + 599_000)
      expect(await resolveLinkToken(deps, body.token)).not.toBeNull()
      clock.set(start + 600_000)
      expect(await resolveLinkToken(deps, body.token)).toBeNull()
    } finally {
      clock.set(start)
    }
  })

  it('a signed link without expSeconds carries no exp; opaque ignores expSeconds', async () => {
    const signed = (await mint({ destinationUrl: 'https://example.com/', contactId: contactA, type: 'signed' })).json()
    const claims = JSON.parse(Buffer.from(signed.token.split('.')[2], 'base64url').toString('utf8'))
    expect(Object.keys(claims).sort()).toEqual(['acc', 'iat', 'sub'])
    const opaque = await mint({ destinationUrl: 'https://example.com/', contactId: contactA, type: 'opaque', expSeconds: 5 })
    expect(opaque.statusCode).toBe(200)
    expect(opaque.json().token).toMatch(/^a\./)
  })

  it('every character change of a minted signed token resolves to null', async () => {
    const token: string = (await mint({ destinationUrl: 'https://example.com/', contactId: contactA, type: 'signed' })).json().token
    expect(await resolveLinkToken(deps, token)).not.toBeNull()
    const swap = (c: string) => (c === 'A' ? 'B' : 'A')
    const tampered = new Set<string>()
    for (let i = 2; i < token.length; i++) if (token[i] !== '.') tampered.add(token.slice(0, i) + swap(token[i]!) + token.slice(i + 1))
    const results = await Promise.all([...tampered].map((t) => resolveLinkToken(deps, t)))
    expect(results.filter((r) => r !== null)).toEqual([])
  })

  it('resolves unknown and malformed tokens to null', async () => {
    for (const t of ['', 'a.', `a.${'A'.repeat(43)}`, 'x.y', `s.nokey.e30.${'A'.repeat(43)}`, 'a'.repeat(5000)]) {
      expect(await resolveLinkToken(deps, t)).toBeNull()
    }
  })
})

describe('POST /api/contacts/links: failures', () => {
  it('400 invalid JSON body', async () => {
    const res = await app.inject({
      method: 'POST',
      url: URL_PATH,
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
      payload: '{"destinationUrl":',
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({ ok: false, error: 'invalid JSON body' })
  })

  it('400 invalid payload with issues when the contact is not named', async () => {
    for (const payload of [
      { destinationUrl: 'https://example.com/' },
      { destinationUrl: 'https://example.com/', source: 'crm' },
      { destinationUrl: 'https://example.com/', externalId: 'x' },
    ]) {
      const res = await mint(payload)
      expect(res.statusCode).toBe(400)
      const body = res.json()
      expect(body.ok).toBe(false)
      expect(body.error).toBe('invalid payload')
      expect(body.issues.length).toBeGreaterThan(0)
      for (const issue of body.issues) {
        expect(typeof issue.code).toBe('string')
        expect(typeof issue.message).toBe('string')
        expect(typeof issue.path).toBe('string')
      }
    }
  })

  it.each([
    ['destinationUrl empty', { destinationUrl: '' }, '/destinationUrl'],
    ['destinationUrl 2049', { destinationUrl: `https://example.com/${'a'.repeat(2049 - 20)}` }, '/destinationUrl'],
    ['destinationUrl missing', { destinationUrl: undefined }, '/destinationUrl'],
    ['contactId not a uuid', { contactId: 'not-a-uuid' }, '/contactId'],
    ['contactId empty', { contactId: '' }, '/contactId'],
    ['contactId 129', { contactId: 'a'.repeat(129) }, '/contactId'],
    ['source empty', { contactId: undefined, source: '', externalId: 'x' }, '/source'],
    ['source 65', { contactId: undefined, source: 's'.repeat(65), externalId: 'x' }, '/source'],
    ['externalId empty', { contactId: undefined, source: 'crm', externalId: '' }, '/externalId'],
    ['externalId 257', { contactId: undefined, source: 'crm', externalId: 'e'.repeat(257) }, '/externalId'],
    ['type unknown', { type: 'jwt' }, '/type'],
    ['expSeconds 0', { type: 'signed', expSeconds: 0 }, '/expSeconds'],
    ['expSeconds 31536001', { type: 'signed', expSeconds: 31_536_001 }, '/expSeconds'],
    ['expSeconds fractional', { type: 'signed', expSeconds: 1.5 }, '/expSeconds'],
    ['expSeconds string', { type: 'signed', expSeconds: '60' }, '/expSeconds'],
  ])('400 invalid payload: %s', async (_name, patch, path) => {
    const payload: Record<string, unknown> = { destinationUrl: 'https://example.com/', contactId: contactA, ...patch }
    for (const k of Object.keys(payload)) if (payload[k] === undefined) delete payload[k]
    const res = await mint(payload)
    expect(res.statusCode).toBe(400)
    const body = res.json()
    expect(body.error).toBe('invalid payload')
    expect(body.issues.map((i: { path: string }) => i.path)).toContain(path)
  })

  it('the bounds themselves are accepted', async () => {
    const longUrl = `https://example.com/${'a'.repeat(2048 - 20)}`
    expect(longUrl.length).toBe(2048)
    expect((await mint({ destinationUrl: longUrl, contactId: contactA, type: 'signed', expSeconds: 31_536_000 })).statusCode).toBe(200)
    expect((await mint({ destinationUrl: 'https://example.com/', contactId: contactA, type: 'signed', expSeconds: 1 })).statusCode).toBe(200)
  })

  it('400 invalid destination URL: only for a value that does not parse as a URL', async () => {
    for (const destinationUrl of ['not a url', 'example.com/landing', '//example.com/', 'https://', 'https://example.com:99999/']) {
      const res = await mint({ destinationUrl, contactId: contactA })
      expect(res.statusCode).toBe(400)
      expect(res.json()).toEqual({ ok: false, error: 'invalid destination URL' })
    }
  })

  it("400 destination host is not authorized (including another tenant's domain)", async () => {
    for (const destinationUrl of [
      'https://evil-example.com/',
      'https://example.com.evil.com/',
      'http://127.0.0.1/',
      'https://other.example/',
      'https://acme.io/',
    ]) {
      const res = await mint({ destinationUrl, contactId: contactA })
      expect(res.statusCode).toBe(400)
      expect(res.json()).toEqual({ ok: false, error: 'destination host is not authorized' })
    }
  })

  it('400 destination host is not authorized for every URL that parses but names its host ambiguously (contract 4.2)', async () => {
    // each parses as a URL, but none is an http(s) URL whose host every client reads alike as an authorized one
    for (const destinationUrl of [
      'https://example.com@other.example/',
      'https://shop.acme.io:443@evil.example/x',
      'https://user:pw@example.com/',
      'https://example.com\\@evil.com',
      'ftp://example.com/',
      'javascript:alert(1)//example.com',
      'https:example.com',
    ]) {
      const res = await mint({ destinationUrl, contactId: contactA })
      expect(res.statusCode).toBe(400)
      expect(res.json()).toEqual({ ok: false, error: 'destination host is not authorized' })
    }
  })

  it('public suffixes: the management API refuses `co.uk`, `github.io`; one stored before that rule authorizes nothing', async () => {
    for (const suffix of ['co.uk', 'github.io', 'com.au']) {
      const res = await app.inject({
        method: 'PUT',
        url: `/api/v1/admin/accounts/${tenant.accountId}/authorized-domains`,
        headers: OPERATOR,
        payload: { domains: ['example.com', suffix] },
      })
      expect(res.statusCode).toBe(400)
      expect(res.json()).toMatchObject({ ok: false, error: 'invalid payload', issues: [{ code: 'public_suffix', path: '/domains/1' }] })
    }
    // the list is unchanged by the refused requests
    expect((await deps.tenants.getAccount(tenant.accountId))!.authorized_domains).toEqual(['example.com', 'shop.acme.io'])
    // an account that holds `co.uk` from before the rule (written directly to the store)
    await deps.tenants.updateAccount(other.accountId, {
      authorized_domains: ['other.example', 'co.uk', 'github.io'],
      updated_at: new Date(clock.now()).toISOString(),
    })
    const otherContact = await seedContact(deps, other.accountId, 'crm', 'ext-psl')
    for (const destinationUrl of ['https://anyone.co.uk/', 'https://www.bbc.co.uk/news', 'https://co.uk/', 'https://someone.github.io/']) {
      const res = await mint({ destinationUrl, contactId: otherContact }, { authorization: `Bearer ${other.key}` })
      expect(res.statusCode, destinationUrl).toBe(400)
      expect(res.json()).toEqual({ ok: false, error: 'destination host is not authorized' })
    }
    // a tenant's own name under a suffix is an ordinary domain
    await deps.tenants.updateAccount(other.accountId, { authorized_domains: ['acme.co.uk', 'acme.github.io'], updated_at: new Date(clock.now()).toISOString() })
    for (const destinationUrl of ['https://www.acme.co.uk/', 'https://acme.github.io/page']) {
      expect((await mint({ destinationUrl, contactId: otherContact }, { authorization: `Bearer ${other.key}` })).statusCode, destinationUrl).toBe(200)
    }
    await deps.tenants.updateAccount(other.accountId, { authorized_domains: ['other.example'], updated_at: new Date(clock.now()).toISOString() })
  })

  it('401 without a key, with a wrong or blank key, with both key forms; before the body is looked at', async () => {
    const cases: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer lsk_wrong' },
      { 'x-api-key': 'lsk_wrong' },
      { authorization: 'Bearer ' },
      { 'x-api-key': '' },
      { authorization: `Bearer ${tenant.key}`, 'x-api-key': tenant.key },
    ]
    for (const headers of cases) {
      const res = await mint({ destinationUrl: 'https://example.com/', contactId: contactA }, headers)
      expect(res.statusCode, JSON.stringify(headers)).toBe(401)
      expect(res.json()).toEqual({ ok: false, error: 'unauthorized' })
    }
    const badJson = await app.inject({ method: 'POST', url: URL_PATH, headers: { 'content-type': 'application/json' }, payload: '{' })
    expect(badJson.statusCode).toBe(401)
  })

  it('403 for a key with only contacts:write, and for a key with the default scopes', async () => {
    for (const key of [issuedKey(tenant, 'write'), issuedKey(tenant, 'default')]) {
      const res = await mint({ destinationUrl: 'https://example.com/', contactId: contactA }, { authorization: `Bearer ${key}` })
      expect(res.statusCode).toBe(403)
      expect(res.json()).toEqual({ ok: false, error: 'forbidden' })
    }
  })

  it("404 contact not found: unknown id, unknown pair, another account's contact", async () => {
    for (const payload of [
      { destinationUrl: 'https://example.com/', contactId: randomUUID() },
      { destinationUrl: 'https://example.com/', source: 'crm', externalId: 'nobody' },
      { destinationUrl: 'https://example.com/', contactId: foreignContact },
    ]) {
      const res = await mint(payload)
      expect(res.statusCode).toBe(404)
      expect(res.json()).toEqual({ ok: false, error: 'contact not found' })
    }
  })

  it('500 mint failed when the contact store or the link token store throws (nothing leaked)', async () => {
    const failing = <T extends object>(store: T, method: keyof T) =>
      new Proxy(store, {
        get: (target, prop, receiver) =>
          prop === method
            ? async () => {
                throw new Error('store exploded: secret detail')
              }
            : Reflect.get(target, prop, receiver),
      })
    const brokenDeps: Array<[string, PlatformDeps]> = [
      ['contacts.get', { ...deps, contacts: failing(deps.contacts, 'get') }],
      ['linkTokens.put', { ...deps, linkTokens: failing(deps.linkTokens, 'put') }],
    ]
    for (const [method, broken] of brokenDeps) {
      const brokenApp = await buildApp(broken)
      try {
        const res = await mint({ destinationUrl: 'https://example.com/', contactId: contactA }, undefined, brokenApp)
        expect(res.statusCode, method).toBe(500)
        expect(res.json()).toEqual({ ok: false, error: 'mint failed' })
        expect(res.body).not.toContain('exploded')
      } finally {
        await brokenApp.close()
      }
    }
  })

  it('503 signed links unavailable when the signing keys cannot be had; opaque still works', async () => {
    const throwing: Secrets = {
      get: async () => {
        throw new Error('secret manager down')
      },
      addVersion: async () => {
        throw new Error('secret manager down')
      },
      close: async () => {},
    }
    const empty: Secrets = { get: async () => null, addVersion: async () => {}, close: async () => {} }
    const variants: PlatformDeps[] = [
      { ...deps, secrets: throwing },
      // a provisioned backend never creates keys on its own: missing means unavailable
      { ...deps, secrets: empty, config: { ...deps.config, secretsBackend: 'secretmanager', gcpProject: 'lsv-test' } },
    ]
    for (const variant of variants) {
      const brokenApp = await buildApp(variant)
      try {
        const res = await mint({ destinationUrl: 'https://example.com/', contactId: contactA, type: 'signed' }, undefined, brokenApp)
        expect(res.statusCode).toBe(503)
        expect(res.json()).toEqual({ ok: false, error: 'signed links unavailable' })
        const opaque = await mint({ destinationUrl: 'https://example.com/', contactId: contactA }, undefined, brokenApp)
        expect(opaque.statusCode).toBe(200)
      } finally {
        await brokenApp.close()
      }
    }
  })

  it('429 rate limited after 120 requests per account per minute, with Retry-After; other accounts unaffected', async () => {
    const limited = await provision(['example.com'])
    const limitedContact = await seedContact(deps, limited.accountId, 'crm', 'ext-r')
    const start = clock.now()
    clock.set(Math.ceil(start / 60_000) * 60_000 + 60_000) // start of a fresh window
    try {
      const send = () => mint({ destinationUrl: 'https://example.com/', contactId: limitedContact }, { authorization: `Bearer ${limited.key}` })
      // requests with an invalid body count too (the limit is checked before the body is read)
      for (let i = 0; i < 119; i++) {
        const res = await mint({ destinationUrl: '' }, { authorization: `Bearer ${limited.key}` })
        expect(res.statusCode).toBe(400)
      }
      expect((await send()).statusCode).toBe(200)
      const res = await send()
      expect(res.statusCode).toBe(429)
      expect(res.json()).toEqual({ ok: false, error: 'rate limited' })
      expect(res.headers['retry-after']).toBe('60')
      // another customer is not affected
      expect((await mint({ destinationUrl: 'https://other.example/', contactId: foreignContact }, { authorization: `Bearer ${other.key}` })).statusCode).toBe(
        200,
      )
      // the next window admits again
      clock.advance(60_000)
      expect((await send()).statusCode).toBe(200)
    } finally {
      clock.set(start)
      await limited.cleanup()
    }
  })
})
