import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { createTestTenant, type ManagedTenant } from '../helpers/tenant.ts'
import { RELIABILITY_TENANT, adminCaller, contactRecord, type Injectable } from './support/requests.ts'
import { printFigure } from './support/figures.ts'

/**
 * Item 6: key and token rotation against a ManualClock. During the grace window of a rotation
 * the old and the new credential both work; from the end of the window the old one answers 401.
 * A revocation takes effect within the documented delay: the management API spec says
 * "after the grace the key answers 401", so the delay is the grace itself (0 by default), and a
 * revoked key must fail on the very next request once the clock reaches the grace's end.
 */

type Deps = Awaited<ReturnType<typeof createTestDeps>>
const GRACE_S = 300
/** documented revocation delay beyond the grace (docs/management-api: none) */
const REVOCATION_DELAY_MS = 0

describe('reliability 6: key rotation and revocation', () => {
  let deps: Deps
  let clock: ManualClock
  let edge: Injectable
  let portal: Injectable
  let t: ManagedTenant
  let admin: ReturnType<typeof adminCaller>
  const conn = () => `/api/v1/admin/accounts/${t.accountId}/connections`
  const body = JSON.stringify({ contacts: [contactRecord(1)] })
  const push = (key: string) =>
    edge
      .inject({
        method: 'POST',
        url: '/v1/contacts',
        payload: body,
        headers: { host: t.host, 'content-type': 'application/json', authorization: `Bearer ${key}` },
      })
      .then((r) => r.statusCode)
  const pushToken = (token: string) =>
    edge
      .inject({
        method: 'POST',
        url: `/v1/contacts/${t.webhookConnectionId}`,
        payload: body,
        headers: { host: t.host, 'content-type': 'application/json', 'x-webhook-token': token },
      })
      .then((r) => r.statusCode)
  const pushLocation = (token: string) =>
    edge
      .inject({
        method: 'POST',
        url: '/v1/contacts/partnercrm',
        payload: JSON.stringify({ contactId: 'p-1', locationId: t.locationId }),
        headers: { host: t.host, 'content-type': 'application/json', 'x-webhook-token': token },
      })
      .then((r) => r.statusCode)
  const mint = (key: string) =>
    portal
      .inject({
        method: 'POST',
        url: '/api/contacts/links',
        payload: JSON.stringify({ destinationUrl: 'https://example.com/', source: 'crm', externalId: 'nobody' }),
        headers: { 'content-type': 'application/json', 'x-api-key': key },
      })
      .then((r) => r.statusCode)

  beforeAll(async () => {
    clock = new ManualClock(Date.now())
    deps = await createTestDeps({ clock })
    edge = (await buildEdge(deps)) as unknown as Injectable
    portal = (await buildPortal(deps)) as unknown as Injectable
    t = await createTestTenant({ managementApi: portal, deps }, RELIABILITY_TENANT)
    admin = adminCaller(portal, deps)
  })
  afterAll(async () => {
    await edge?.close()
    await portal?.close()
    await deps?.cleanup()
  })

  it('API key rotation: both work during the grace window, the old one fails from its end', async () => {
    const old = t.key
    const rotated = await admin('POST', `${conn()}/${t.apiConnectionId}/keys/${t.keyId}/rotate`, { grace_seconds: GRACE_S })
    expect(rotated.status).toBe(201)
    const fresh = rotated.body.key as string
    const during = [await push(old), await push(fresh), await mint(old), await mint(fresh)]
    clock.advance(GRACE_S * 1000 - 1)
    const lastMs = [await push(old), await push(fresh)]
    clock.advance(1)
    const after = [await push(old), await push(fresh), await mint(old), await mint(fresh)]
    printFigure(
      'key-rotation api-key',
      `during grace old/new ${during.slice(0, 2).join('/')}, last ms ${lastMs.join('/')}, after grace old/new ${after.slice(0, 2).join('/')}`,
    )
    expect(during[0]).toBe(202)
    expect(during[1]).toBe(202)
    expect(during[2]).not.toBe(401) // 404 contact not found: authenticated
    expect(during[3]).not.toBe(401)
    expect(lastMs).toEqual([202, 202])
    expect(after[0]).toBe(401)
    expect(after[1]).toBe(202)
    expect(after[2]).toBe(401)
    expect(after[3]).not.toBe(401)
    t.key = fresh
    t.keyId = rotated.body.id
  })

  it('API key revocation takes effect within the documented delay', async () => {
    const k = await admin('POST', `${conn()}/${t.apiConnectionId}/keys`, { scopes: ['contacts:write'] })
    expect(await push(k.body.key)).toBe(202) // also warms any cache
    const del = await admin('DELETE', `${conn()}/${t.apiConnectionId}/keys/${k.body.id}`)
    expect(del.status).toBe(204)
    clock.advance(REVOCATION_DELAY_MS)
    const status = await push(k.body.key)
    printFigure('key-rotation revocation', `revoked key answers ${status} ${REVOCATION_DELAY_MS} ms after DELETE`)
    expect(status).toBe(401)
    expect(await push(t.key)).toBe(202) // other keys are untouched
  })

  it('revocation with a grace: works until the grace ends, then 401', async () => {
    const k = await admin('POST', `${conn()}/${t.apiConnectionId}/keys`, { scopes: ['contacts:write'] })
    await admin('DELETE', `${conn()}/${t.apiConnectionId}/keys/${k.body.id}?grace_seconds=60`)
    const during = await push(k.body.key)
    clock.advance(60_000 + REVOCATION_DELAY_MS)
    const after = await push(k.body.key)
    expect([during, after]).toEqual([202, 401])
  })

  it('source token rotation: both work during the grace window, the old one fails from its end', async () => {
    const old = t.sourceToken
    const rot = await admin('POST', `${conn()}/${t.webhookConnectionId}/token/rotate`, { grace_seconds: GRACE_S })
    expect(rot.status).toBe(201)
    const fresh = rot.body.token as string
    const during = [await pushToken(old), await pushToken(fresh)]
    clock.advance(GRACE_S * 1000)
    const after = [await pushToken(old), await pushToken(fresh)]
    printFigure('key-rotation source-token', `during grace old/new ${during.join('/')}, after grace old/new ${after.join('/')}`)
    expect(during).toEqual([202, 202])
    expect(after).toEqual([401, 202])
    t.sourceToken = fresh
  })

  it('a deleted partner CRM location stops accepting its token', async () => {
    expect(await pushLocation(t.locationToken)).toBe(202)
    await admin('DELETE', `${conn()}/${t.partnerConnectionId}/locations/${t.locationId}`)
    clock.advance(REVOCATION_DELAY_MS)
    // contract 4.5: an inactive location answers like an unknown subdomain
    expect(await pushLocation(t.locationToken)).toBe(404)
  })
})
