import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { createTestTenant, issuedKey, type StoredTenant } from '../helpers/tenant.ts'
import { body, createHarness, record, type Harness } from '../ingest/support/harness.ts'
import { signIn } from './support.ts'
import { page } from './screens-support.ts'

/**
 * Issue 22, job 6: the inbound debugger. Pushes go through a real edge app (closed afterwards,
 * so its recorder's last flush has stored them), the page is read through the portal app as a
 * signed-in tenant: each push appears with its answer, error text, records accepted, dropped
 * keys, request id, trace and credential; the list is bounded; no secret ever appears.
 */
describe('portal: inbound debugger (issue 22, job 6)', () => {
  let h: Harness
  let t: StoredTenant
  let other: StoredTenant
  let cookie = ''
  const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
  const REVOKED = new Date(Date.now() - 60_000).toISOString()

  const pushesPath = (connectionId: string) => `/portal/connections/${connectionId}/pushes`
  /** the rows of the debugger's table, as text per cell */
  const rowsOf = (htmlText: string) =>
    [...htmlText.matchAll(/<tr>\s*<td[^>]*><time[\s\S]*?<\/tr>/g)].map((m) =>
      [...m[0].matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((c) =>
        c[1]!
          .replace(/<[^>]+>/g, '')
          .replace(/\s+/g, ' ')
          .trim(),
      ),
    )

  beforeAll(async () => {
    h = await createHarness()
    t = await createTestTenant(h.deps, {
      api: { keys: { old: { name: 'Old laptop', revokedAt: REVOKED }, bulk: { name: 'Bulk loader' } } },
    })
    other = await createTestTenant(h.deps)
    cookie = await signIn(h.portal, t.accountId)
  })
  afterAll(async () => {
    await t?.cleanup()
    await other?.cleanup()
    await h?.close()
  })

  it('shows a good push, a revoked key, malformed JSON, a wrong source token and a rate-limited push, each with its fields', async () => {
    const edge = await buildEdge(h.deps)
    const json = { host: t.host, 'content-type': 'application/json' }
    const good = await edge.inject({
      method: 'POST',
      url: '/v1/contacts',
      headers: t.keyHeaders({ traceparent: `00-${TRACE}-00f067aa0ba902b7-01` }),
      payload: body([record(1, { favourite_colour: 'teal' }), record(2)]),
    })
    expect(good.statusCode, good.body).toBe(202)
    const revoked = await edge.inject({
      method: 'POST',
      url: '/v1/contacts',
      headers: { ...json, authorization: `Bearer ${issuedKey(t, 'old')}` },
      payload: body([record(3)]),
    })
    expect(revoked.statusCode).toBe(401)
    const malformed = await edge.inject({ method: 'POST', url: '/v1/contacts', headers: t.keyHeaders(), payload: '{"contacts": [' })
    expect(malformed.statusCode).toBe(400)
    const wrongToken = await edge.inject({
      method: 'POST',
      url: `/v1/contacts/${t.webhookConnectionId}`,
      headers: { ...json, 'x-webhook-token': 'not-the-token' },
      payload: body([record(4)]),
    })
    expect(wrongToken.statusCode).toBe(401)
    // an unknown key names no connection: it must not appear anywhere
    const unknown = await edge.inject({ method: 'POST', url: '/v1/contacts', headers: { ...json, 'x-api-key': `lsk_${'x'.repeat(43)}` }, payload: body([]) })
    expect(unknown.statusCode).toBe(401)
    // the bulk key: 120 admitted per 60 s, the 121st refused (and the list keeps 100)
    const bulk = { ...json, authorization: `Bearer ${issuedKey(t, 'bulk')}` }
    let last = 0
    for (let i = 0; i < 121; i++) {
      last = (await edge.inject({ method: 'POST', url: '/v1/contacts', headers: bulk, payload: body([record(100 + i)]) })).statusCode
    }
    expect(last).toBe(429)
    // closing flushes what the recorder gathered (push-log.ts)
    await edge.close()

    const res = await page(h.portal, pushesPath(t.apiConnectionId), cookie)
    expect(res.statusCode).toBe(200)
    const rows = rowsOf(res.body)
    // bounded by count: 121 accepted pushes on this connection, the newest 100 shown, and apart
    // from them its 3 refused ones (revoked key, malformed JSON, 429: refused pushes have their own bound)
    // mutation: dropping the recorder's per-connection cap fails this when one flush holds them all; the
    // adapter's trim across flushes is the conformance suite's (test/conformance/suites/push-log.ts)
    expect(rows.filter((r) => r[1]!.startsWith('202'))).toHaveLength(100)
    expect(rows).toHaveLength(103)
    // newest first: the 429 of the bulk key
    // mutation: not recording a 429 (logged set after consumePushQuota) fails this
    expect(rows[0]!.slice(1, 5)).toEqual(['429 rate limited', 'rate limited', '—', '—'])
    expect(rows[0]![5]).toContain('Bulk loader')
    expect(rows[0]![5]).toContain(t.keys.bulk!.id)
    expect(rows[1]!.slice(1, 4)).toEqual(['202 accepted', '—', '1'])

    // the earlier ones, on a page of their own (the bulk pushes pushed them out of this one)
    const conn = await page(h.portal, pushesPath(t.webhookConnectionId), cookie)
    const sourceRows = rowsOf(conn.body)
    // mutation: not looking up the refused source (refusedSource) fails this
    expect(sourceRows).toHaveLength(1)
    expect(sourceRows[0]!.slice(1, 4)).toEqual(['401 not authenticated', 'unauthorized', '—'])
    expect(sourceRows[0]![5]).toBe('source token (a token that does not match)')
    // the token sent is never shown
    expect(conn.body).not.toContain('not-the-token')
    expect(conn.body).not.toContain(t.sourceToken)

    for (const secret of [t.key, issuedKey(t, 'old'), issuedKey(t, 'bulk')]) expect(res.body).not.toContain(secret)
  })

  it('shows the good, revoked and malformed pushes with accepted count, dropped keys, request id, trace and credential', async () => {
    const edge = await buildEdge(h.deps)
    const json = { host: t.host, 'content-type': 'application/json' }
    const good = await edge.inject({
      method: 'POST',
      url: '/v1/contacts',
      headers: t.keyHeaders({ traceparent: `00-${TRACE}-00f067aa0ba902b7-01` }),
      payload: body([record(1, { favourite_colour: 'teal' }), { email: 'no-id@example.com' }]),
    })
    expect(good.statusCode, good.body).toBe(202)
    const revoked = await edge.inject({
      method: 'POST',
      url: '/v1/contacts',
      headers: { ...json, authorization: `Bearer ${issuedKey(t, 'old')}` },
      payload: body([]),
    })
    expect(revoked.statusCode).toBe(401)
    const malformed = await edge.inject({ method: 'POST', url: '/v1/contacts', headers: t.keyHeaders(), payload: '{"contacts": [' })
    expect(malformed.statusCode).toBe(400)
    await edge.close()

    const res = await page(h.portal, pushesPath(t.apiConnectionId), cookie)
    const rows = rowsOf(res.body)
    const [m, r, g] = rows
    // malformed: 400 with the envelope's text, nothing accepted
    // mutation: dropping the onSend hook (no error text) fails this
    expect(m!.slice(1, 4)).toEqual(['400 bad request', malformed.json().error, '—'])
    expect(m![5]).toContain(t.keyId)
    // revoked key: 401, named by its name and id (refusedApiKey)
    // mutation: not looking up a refused key fails this (the row is missing: r would be the good push)
    expect(r!.slice(1, 3)).toEqual(['401 not authenticated', 'unauthorized'])
    expect(r![5]).toContain('Old laptop')
    expect(r![5]).toContain(t.keys.old!.id)
    // good: 202, `accepted` as answered (the record without external_id is not counted), the
    // key no mapping reads, the request id the answer's log line carries, the trace
    expect(g!.slice(1, 5)).toEqual(['202 accepted', '—', String(good.json().accepted), 'favourite_colour'])
    expect(g![6]).toMatch(/^[0-9a-f-]{36}$/)
    expect(g![7]).toContain(TRACE)
    expect(res.body).toContain('the last 100 pushes of the last 7 days')
    expect(res.body).toContain('and apart from them the last 100 that were refused')
    for (const secret of [t.key, issuedKey(t, 'old')]) expect(res.body).not.toContain(secret)
  })

  it("another account's connection is not found, and its pushes are not shown", async () => {
    const res = await page(h.portal, pushesPath(other.apiConnectionId), cookie)
    expect(res.statusCode).toBe(404)
  })
})
