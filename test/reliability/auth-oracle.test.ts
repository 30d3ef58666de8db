import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { createTestTenant, type ManagedTenant } from '../helpers/tenant.ts'
import { RELIABILITY_TENANT, adminCaller, contactRecord, type Injectable } from './support/requests.ts'
import { printFigure } from './support/figures.ts'

/**
 * Item 5: the authentication oracle. For each operation, every way a credential can be wrong
 * (missing, unknown, malformed, expired, revoked, another tenant's or connection's) must give a
 * byte-identical 401: same status, same headers (except date and request id), same body. Any
 * difference tells an attacker which check failed (contract 5.6). The partner CRM cutover is in
 * the past, so a token-less call is a 401 there too.
 */

type Deps = Awaited<ReturnType<typeof createTestDeps>>
const VARYING = new Set(['date', 'x-request-id', 'request-id', 'traceparent', 'x-cloud-trace-context'])

function fingerprint(res: { statusCode: number; headers: Record<string, unknown>; body: string }) {
  const headers = Object.entries(res.headers)
    .filter(([k]) => !VARYING.has(k.toLowerCase()))
    .map(([k, v]) => `${k.toLowerCase()}: ${Array.isArray(v) ? v.join(', ') : String(v)}`)
    .sort()
  return `${res.statusCode}\n${headers.join('\n')}\n\n${res.body}`
}

describe('reliability 5: byte-identical 401s', () => {
  let deps: Deps
  let clock: ManualClock
  let edge: Injectable
  let portal: Injectable
  let a: ManagedTenant
  let b: ManagedTenant
  const keys: Record<string, string> = {}
  const tokens: Record<string, string> = {}
  const locTokens: Record<string, string> = {}

  beforeAll(async () => {
    clock = new ManualClock(Date.now())
    deps = await createTestDeps({ clock, env: { PARTNERCRM_TOKEN_CUTOVER: '2020-01-01T00:00:00Z' } })
    edge = (await buildEdge(deps)) as unknown as Injectable
    portal = (await buildPortal(deps)) as unknown as Injectable
    a = await createTestTenant({ managementApi: portal, deps }, RELIABILITY_TENANT)
    b = await createTestTenant({ managementApi: portal, deps }, RELIABILITY_TENANT)
    const admin = adminCaller(portal, deps)
    const conn = `/api/v1/admin/accounts/${a.accountId}/connections`
    const scopes = ['contacts:write', 'contacts:links:write']
    const expiring = await admin('POST', `${conn}/${a.apiConnectionId}/keys`, { scopes, expires_at: new Date(clock.now() + 60_000).toISOString() })
    const revoked = await admin('POST', `${conn}/${a.apiConnectionId}/keys`, { scopes })
    const rotated = await admin('POST', `${conn}/${a.apiConnectionId}/keys`, { scopes })
    const oldToken = a.sourceToken
    const rot = await admin('POST', `${conn}/${a.webhookConnectionId}/token/rotate`, { grace_seconds: 0 })
    a.sourceToken = rot.body.token
    const loc2 = await admin('POST', `${conn}/${a.partnerConnectionId}/locations`, { location_id: `${a.locationId}-gone` })
    await admin('DELETE', `${conn}/${a.partnerConnectionId}/locations/${a.locationId}-gone`)
    await admin('DELETE', `${conn}/${a.apiConnectionId}/keys/${revoked.body.id}?grace_seconds=0`)
    await admin('POST', `${conn}/${a.apiConnectionId}/keys/${rotated.body.id}/rotate`, { grace_seconds: 10 })
    clock.advance(120_000) // past the expiry and the rotation grace

    Object.assign(keys, {
      missing: '',
      unknown: `lsk_${'A'.repeat(40)}`,
      'unknown, same prefix': a.key.slice(0, 12) + 'x'.repeat(Math.max(1, a.key.length - 12)),
      malformed: 'not-a-key',
      'malformed unicode': 'lsk_\u00e9\u00e9\u00e9',
      'very long': `lsk_${'z'.repeat(4096)}`,
      expired: expiring.body.key,
      revoked: revoked.body.key,
      'rotated past grace': rotated.body.key,
      'other tenant': b.key,
    })
    Object.assign(tokens, {
      missing: '',
      unknown: 'x'.repeat(43),
      malformed: '%%%',
      'very long': 't'.repeat(4096),
      'rotated past grace': oldToken,
      'other tenant': b.sourceToken,
    })
    Object.assign(locTokens, {
      missing: '',
      unknown: 'x'.repeat(43),
      malformed: '%%%',
      'other connection': b.locationToken,
      'other tenant location token': b.locationToken,
      'token of a deleted location': loc2.body?.token ?? 'x',
    })
  })
  afterAll(async () => {
    await edge?.close()
    await portal?.close()
    await deps?.cleanup()
  })

  async function compare(label: string, variants: Record<string, () => Promise<{ statusCode: number; headers: Record<string, unknown>; body: string }>>) {
    const prints = new Map<string, string>()
    for (const [name, run] of Object.entries(variants)) prints.set(name, fingerprint(await run()))
    const distinct = new Set(prints.values())
    printFigure(
      `auth-oracle ${label}`,
      `${prints.size} wrong credentials -> ${distinct.size} distinct response${distinct.size === 1 ? '' : 's'} (status ${[...distinct].map((p) => p.split('\n')[0]).join('/')})`,
    )
    const [first] = prints.values()
    expect(first!.startsWith('401\n')).toBe(true)
    for (const [name, p] of prints) expect(p, name).toBe(first)
  }

  const body = JSON.stringify({ contacts: [contactRecord(1)] })

  it('POST /v1/contacts: keys by bearer and by x-api-key', async () => {
    const variants: Record<string, () => Promise<any>> = {}
    for (const [name, key] of Object.entries(keys)) {
      variants[`bearer ${name}`] = () =>
        edge.inject({
          method: 'POST',
          url: '/v1/contacts',
          payload: body,
          headers: { host: a.host, 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        })
      variants[`x-api-key ${name}`] = () =>
        edge.inject({
          method: 'POST',
          url: '/v1/contacts',
          payload: body,
          headers: { host: a.host, 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
        })
    }
    variants['blank bearer'] = () =>
      edge.inject({
        method: 'POST',
        url: '/v1/contacts',
        payload: body,
        headers: { host: a.host, 'content-type': 'application/json', authorization: 'Bearer ' },
      })
    variants['basic scheme'] = () =>
      edge.inject({
        method: 'POST',
        url: '/v1/contacts',
        payload: body,
        headers: { host: a.host, 'content-type': 'application/json', authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
      })
    variants['wrong bearer + valid x-api-key'] = () =>
      edge.inject({
        method: 'POST',
        url: '/v1/contacts',
        payload: body,
        headers: { host: a.host, 'content-type': 'application/json', authorization: 'Bearer lsk_wrong', 'x-api-key': a.key },
      })
    await compare('POST /v1/contacts', variants)
  })

  it('POST /api/contacts/links: keys', async () => {
    const link = JSON.stringify({ destinationUrl: 'https://example.com/', source: 'crm', externalId: 'ext-1' })
    const variants: Record<string, () => Promise<any>> = {}
    for (const [name, key] of Object.entries(keys)) {
      if (name === 'other tenant') continue // a valid key of its own tenant: not an auth failure on the portal origin
      variants[name] = () =>
        portal.inject({
          method: 'POST',
          url: '/api/contacts/links',
          payload: link,
          headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        })
    }
    await compare('POST /api/contacts/links', variants)
  })

  it('POST /api/contacts (portal fallback): keys', async () => {
    const variants: Record<string, () => Promise<any>> = {}
    for (const [name, key] of Object.entries(keys)) {
      if (name === 'other tenant') continue
      variants[name] = () =>
        portal.inject({
          method: 'POST',
          url: '/api/contacts',
          payload: body,
          headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
        })
    }
    await compare('POST /api/contacts', variants)
  })

  it('POST /v1/contacts/{sourceId}: tokens by header and by query', async () => {
    const variants: Record<string, () => Promise<any>> = {}
    for (const [name, token] of Object.entries(tokens)) {
      variants[`header ${name}`] = () =>
        edge.inject({
          method: 'POST',
          url: `/v1/contacts/${a.webhookConnectionId}`,
          payload: body,
          headers: { host: a.host, 'content-type': 'application/json', ...(token ? { 'x-webhook-token': token } : {}) },
        })
      if (token)
        variants[`query ${name}`] = () =>
          edge.inject({
            method: 'POST',
            url: `/v1/contacts/${a.webhookConnectionId}?token=${encodeURIComponent(token)}`,
            payload: body,
            headers: { host: a.host, 'content-type': 'application/json' },
          })
    }
    variants['unknown source id'] = () =>
      edge.inject({
        method: 'POST',
        url: '/v1/contacts/src_does_not_exist',
        payload: body,
        headers: { host: a.host, 'content-type': 'application/json', 'x-webhook-token': a.sourceToken },
      })
    variants['api connection id as source'] = () =>
      edge.inject({
        method: 'POST',
        url: `/v1/contacts/${a.apiConnectionId}`,
        payload: body,
        headers: { host: a.host, 'content-type': 'application/json', 'x-webhook-token': a.sourceToken },
      })
    variants['wrong header, valid query'] = () =>
      edge.inject({
        method: 'POST',
        url: `/v1/contacts/${a.webhookConnectionId}?token=${encodeURIComponent(a.sourceToken)}`,
        payload: body,
        headers: { host: a.host, 'content-type': 'application/json', 'x-webhook-token': 'wrong' },
      })
    await compare('POST /v1/contacts/{sourceId}', variants)
  })

  it('POST /v1/contacts/partnercrm: tokens (cutover passed)', async () => {
    const payload = JSON.stringify({ contactId: 'p-1', locationId: a.locationId, email: 'p@example.com' })
    const variants: Record<string, () => Promise<any>> = {}
    for (const [name, token] of Object.entries(locTokens)) {
      variants[name] = () =>
        edge.inject({
          method: 'POST',
          url: '/v1/contacts/partnercrm',
          payload,
          headers: { host: a.host, 'content-type': 'application/json', ...(token ? { 'x-webhook-token': token } : {}) },
        })
    }
    await compare('POST /v1/contacts/partnercrm', variants)
  })

  it('the management API: operator tokens', async () => {
    const variants: Record<string, () => Promise<any>> = {}
    for (const [name, token] of Object.entries({
      missing: '',
      wrong: 'test-operator-tokeN',
      prefix: 'test-operator',
      longer: 'test-operator-token-x',
      'a tenant key': a.key,
    })) {
      variants[name] = () =>
        portal.inject({
          method: 'POST',
          url: '/api/v1/admin/accounts',
          payload: JSON.stringify({ public_id: 'never-created' }),
          headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        })
    }
    await compare('management API', variants)
  })
})
