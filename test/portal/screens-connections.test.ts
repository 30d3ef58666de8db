import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { handleBatchMessage } from '../../services/upsert-worker/src/handle-batch.ts'
import { previewMapping } from '@lsv/shared/domain/ingest/mapping.ts'
import { ACCOUNT_ONLY, createTestTenant, type ManagedTenant } from '../helpers/tenant.ts'
import { createHarness, body, type Harness } from '../ingest/support/harness.ts'
import { ADMIN, OPERATOR } from '../management/harness.ts'
import { signIn } from './support.ts'
import { formPost, page, PORTAL_ORIGIN } from './screens-support.ts'
import { followReveal } from './reveal-support.ts'

/**
 * Screen 1, Inbound connections, through app.inject as a browser sends it (urlencoded form
 * posts with the session cookie and the portal's Origin), checked against what the management
 * API and the edge see: a key created here pushes on the edge, a preview equals what the worker
 * stores, every change is in the audit log without its secret.
 */
describe('portal screen: inbound connections', () => {
  let h: Harness
  let tenants: ManagedTenant[] = []
  let accountId = ''
  let otherId = ''
  let cookie = ''
  let host = ''
  /** every secret the portal showed, to prove none reached the audit log */
  const secrets: string[] = []

  const admin = async (method: 'GET' | 'POST', url: string, payload?: unknown) => {
    const res = await h.portal.inject({
      method,
      url,
      headers: { ...OPERATOR, 'content-type': 'application/json' },
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    })
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300)
    return res.json()
  }
  /** the one secret shown on a page (the <code> inside the .secret box) */
  const shownSecret = (html: string): string => {
    const m = /<div class="secret"[\s\S]*?<code id="[^"]+">([^<]+)<\/code>/.exec(html)
    expect(m, 'a secret shown once').not.toBeNull()
    const s = m![1]!.replace(/&amp;/g, '&')
    secrets.push(s)
    return s
  }
  const push = (headers: Record<string, string>, url: string, payload: string) =>
    h.edge.inject({ method: 'POST', url, headers: { host, 'content-type': 'application/json', ...headers }, payload })
  const connectionIdFrom = (location: string | undefined) => /\/portal\/connections\/([^?]+)/.exec(location ?? '')![1]!

  beforeAll(async () => {
    h = await createHarness()
    // bare accounts through the management API: the screens add every connection
    tenants = [
      await createTestTenant({ managementApi: h.portal, deps: h.deps }, ACCOUNT_ONLY),
      await createTestTenant({ managementApi: h.portal, deps: h.deps }, ACCOUNT_ONLY),
    ]
    accountId = tenants[0]!.accountId
    otherId = tenants[1]!.accountId
    host = tenants[0]!.host
    cookie = await signIn(h.portal, accountId)
  })
  afterAll(async () => {
    for (const t of tenants) await t.cleanup()
    await h?.close()
  })

  it('without a session: a page redirects (303) to the sign-in explanation, a form post is refused (401), nothing changes', async () => {
    const get = await h.portal.inject({ method: 'GET', url: '/portal/connections' })
    expect(get.statusCode).toBe(303)
    expect(get.headers.location).toBe('/portal/')
    const post = await formPost(h.portal, '/portal/connections', 'lsv_portal=not-a-session', { type: 'api' })
    expect(post.statusCode).toBe(401)
    expect(post.body).toContain('sign-in link')
    expect((await admin('GET', `${ADMIN}/${accountId}/connections`)).data).toEqual([])
  })

  it('pages carry the strict CSP and load their one stylesheet and script from the app', async () => {
    const res = await page(h.portal, '/portal/connections', cookie)
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-security-policy']).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    )
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.body).toContain('<link rel="stylesheet" href="/portal/assets/portal.css">')
    expect(res.body).toContain('<script src="/portal/assets/portal.js" defer></script>')
    expect(res.body).not.toMatch(/<script>|<style>| style="/)
    expect(res.body).toContain('href="#main"')
    for (const [url, type] of [
      ['/portal/assets/portal.css', 'text/css'],
      ['/portal/assets/portal.js', 'text/javascript'],
    ] as const) {
      const asset = await h.portal.inject({ method: 'GET', url })
      expect(asset.statusCode).toBe(200)
      expect(asset.headers['content-type']).toContain(type)
    }
  })

  it('an api connection and a key made in the portal push on the edge; rotation keeps the old key for its grace; revocation stops it', async () => {
    const created = await formPost(h.portal, '/portal/connections', cookie, { type: 'api', name: 'Main CRM', source: 'crm' })
    expect(created.statusCode).toBe(303)
    const connectionId = connectionIdFrom(created.headers.location)
    expect(created.headers.location).toContain('flash=connection-created')
    // the management API sees the same connection
    expect(await admin('GET', `${ADMIN}/${accountId}/connections/${connectionId}`)).toMatchObject({ type: 'api', source: 'crm', name: 'Main CRM' })

    const keyPage = await formPost(h.portal, `/portal/connections/${connectionId}/keys`, cookie, { scopes: 'contacts:write', name: 'prod' })
    const keyShown = await followReveal(h.portal, keyPage, cookie)
    expect(keyShown.body).toContain('data-copy-target=')
    const key = shownSecret(keyShown.body)
    expect(key).toMatch(/^lsk_/)
    // shown once: the next view of the page does not have it
    expect((await page(h.portal, `/portal/connections/${connectionId}`, cookie)).body).not.toContain(key)
    const first = await push({ authorization: `Bearer ${key}` }, '/v1/contacts', body([{ external_id: 'p-1', email: 'a@example.com' }]))
    expect(first.statusCode, first.body).toBe(202)

    const keyId = (await h.deps.tenants.listApiKeys(accountId)).find((k) => key.startsWith(k.prefix))!.id
    const rotated = await formPost(h.portal, `/portal/connections/${connectionId}/keys/${keyId}/rotate`, cookie, { grace_seconds: '600' })
    const newKey = shownSecret((await followReveal(h.portal, rotated, cookie)).body)
    expect(newKey).not.toBe(key)
    for (const k of [key, newKey]) {
      expect((await push({ authorization: `Bearer ${k}` }, '/v1/contacts', body([{ external_id: 'p-2' }]))).statusCode).toBe(202)
    }
    const newKeyId = (await h.deps.tenants.listApiKeys(accountId)).find((k) => newKey.startsWith(k.prefix))!.id
    // the question's confirmed post (issue 29, D7: test/portal/key-revoke-question.test.ts)
    const revoked = await formPost(h.portal, `/portal/connections/${connectionId}/keys/${newKeyId}/revoke`, cookie, { grace_seconds: '0', confirm: 'yes' })
    expect(revoked.statusCode).toBe(303)
    expect(revoked.headers.location).toBe(`/portal/connections/${connectionId}?flash=key-revoked`)
    expect((await push({ authorization: `Bearer ${newKey}` }, '/v1/contacts', body([{ external_id: 'p-3' }]))).statusCode).toBe(401)
    // an invalid grace is shown next to the form with the schema's words, and changes nothing
    const bad = await formPost(h.portal, `/portal/connections/${connectionId}/keys/${keyId}/rotate`, cookie, { grace_seconds: '-5' })
    expect(bad.statusCode).toBe(400)
    expect(bad.body).toContain('class="field-error"')
  })

  it('a webhook source: its token shown once on creation, rotation gives a new one that pushes', async () => {
    const created = await formPost(h.portal, '/portal/connections', cookie, { type: 'webhook', source: 'forms' })
    const createdShown = await followReveal(h.portal, created, cookie)
    const token = shownSecret(createdShown.body)
    const connectionId = (await admin('GET', `${ADMIN}/${accountId}/connections`)).data.find((c: { type: string }) => c.type === 'webhook').id
    expect(createdShown.body).toContain(`href="/portal/connections/${connectionId}"`)
    const rotated = await formPost(h.portal, `/portal/connections/${connectionId}/token/rotate`, cookie, { grace_seconds: '0' })
    const fresh = shownSecret((await followReveal(h.portal, rotated, cookie)).body)
    expect((await push({ 'x-webhook-token': fresh }, `/v1/contacts/${connectionId}`, body([{ external_id: 'w-1' }]))).statusCode).toBe(202)
    expect((await push({ 'x-webhook-token': token }, `/v1/contacts/${connectionId}`, body([{ external_id: 'w-2' }]))).statusCode).toBe(401)
  })

  it("partner CRM: a location's tokenized URL works on the edge; the require-token cutover is the management API's require_token", async () => {
    const created = await formPost(h.portal, '/portal/connections', cookie, { type: 'partnercrm' })
    expect(created.statusCode).toBe(303)
    const connectionId = connectionIdFrom(created.headers.location)
    const added = await formPost(h.portal, `/portal/connections/${connectionId}/locations`, cookie, { location_id: 'loc-9' })
    const url = new URL(shownSecret((await followReveal(h.portal, added, cookie)).body))
    const token = url.searchParams.get('token')!
    secrets.push(token)
    const res = await push(
      {},
      `${url.pathname}?token=${encodeURIComponent(token)}`,
      JSON.stringify({ contactId: 'pc-1', locationId: 'loc-9', firstName: 'Pat' }),
    )
    expect(res.statusCode, res.body).toBe(202)
    // the list shows the URL without the token
    const list = await page(h.portal, `/portal/connections/${connectionId}`, cookie)
    expect(list.body).toContain('loc-9')
    expect(list.body).not.toContain(token)

    const on = await formPost(h.portal, `/portal/connections/${connectionId}/require-token`, cookie, { require_token: 'true' })
    expect(on.statusCode).toBe(303)
    expect((await admin('GET', `${ADMIN}/${accountId}/connections/${connectionId}`)).require_token).toBe(true)
    const tokenless = await push({}, '/v1/contacts/partnercrm', JSON.stringify({ contactId: 'pc-2', locationId: 'loc-9' }))
    expect(tokenless.statusCode, tokenless.body).toBe(401)
    await formPost(h.portal, `/portal/connections/${connectionId}/require-token`, cookie, { require_token: 'false' })
    expect((await admin('GET', `${ADMIN}/${accountId}/connections/${connectionId}`)).require_token).toBe(false)

    const removed = await formPost(h.portal, `/portal/connections/${connectionId}/locations/loc-9/remove`, cookie)
    expect(removed.statusCode).toBe(303)
    // a removed location is no location: 404, as the management API's removal answers on the edge
    expect((await push({ 'x-webhook-token': token }, '/v1/contacts/partnercrm', JSON.stringify({ contactId: 'pc-3', locationId: 'loc-9' }))).statusCode).toBe(
      404,
    )
  })

  it('the mapping preview shows exactly what the worker stores for the same record', async () => {
    expect((await formPost(h.portal, '/portal/settings/custom-fields', cookie, { key: 'plan', label: 'Plan', type: 'multi_select' })).statusCode).toBe(303)
    await formPost(h.portal, '/portal/settings/custom-fields', cookie, { key: 'seats', label: 'Seats', type: 'number' })
    const created = await formPost(h.portal, '/portal/connections', cookie, { type: 'api', source: 'mapped' })
    const connectionId = connectionIdFrom(created.headers.location)
    const rows = new URLSearchParams()
    for (const [f, t] of [
      ['Email Address', 'email'],
      ['Ref', 'external_id'],
      ['Given', 'first_name'],
      ['Plan', 'custom_fields.plan'],
      ['Seats', 'custom_fields.seats'],
      ['Nope', 'custom_fields.undefined_one'],
    ]) {
      rows.append('from', f!)
      rows.append('to', t!)
    }
    const sample = { 'Email Address': 'Ann@Example.COM', ref: 'r-77', given: '  Ann ', plan: 'gold', seats: 12, extra: 'x', email: 'ignored@example.com' }
    const form = (action: string) => {
      const p = new URLSearchParams(rows)
      p.append('sample', JSON.stringify(sample))
      p.append('action', action)
      return h.portal.inject({
        method: 'POST',
        url: `/portal/connections/${connectionId}/${action === 'preview' ? 'preview' : 'mappings'}`,
        headers: { cookie, origin: PORTAL_ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
        payload: p.toString(),
      })
    }
    // custom_fields.undefined_one has no definition: the preview says the mapping takes no part
    const ignored = await form('preview')
    expect(ignored.statusCode).toBe(200)
    expect(ignored.body).toContain('<code>Nope → custom_fields.undefined_one</code>: no custom field is defined with this key')
    rows.delete('from')
    rows.delete('to')
    for (const [f, t] of [
      ['Email Address', 'email'],
      ['Ref', 'external_id'],
      ['Given', 'first_name'],
      ['Plan', 'custom_fields.plan'],
      ['Seats', 'custom_fields.seats'],
    ]) {
      rows.append('from', f!)
      rows.append('to', t!)
    }
    const previewed = await form('preview')
    expect(previewed.statusCode).toBe(200)
    expect(previewed.body).toContain('<code>r-77</code>')
    expect(previewed.body).toContain('no mapping names this key')
    expect(previewed.body).toContain('<code>plan</code>: <code>[&quot;gold&quot;]</code>')
    expect(previewed.body).toContain('<code>seats</code>: <code>&quot;12&quot;</code>')
    // nothing was saved by the preview
    expect((await admin('GET', `${ADMIN}/${accountId}/connections/${connectionId}`)).field_mappings).toEqual([])

    const saved = await form('save')
    expect(saved.statusCode).toBe(303)
    // saving answers with the review (test/portal/mapping-review.test.ts); its form applies the rows
    expect((await admin('GET', `${ADMIN}/${accountId}/connections/${connectionId}`)).field_mappings).toEqual([])
    const applied = await h.portal.inject({
      method: 'POST',
      url: `/portal/connections/${connectionId}/mappings/apply`,
      headers: { cookie, origin: PORTAL_ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
      payload: rows.toString(),
    })
    expect(applied.statusCode).toBe(303)
    const connection = await admin('GET', `${ADMIN}/${accountId}/connections/${connectionId}`)
    expect(connection.field_mappings).toHaveLength(5)

    // the worker path: a key, the edge push, the upsert worker on the queued batch
    const keyAnswer = await formPost(h.portal, `/portal/connections/${connectionId}/keys`, cookie, { scopes: 'contacts:write' })
    const key = shownSecret((await followReveal(h.portal, keyAnswer, cookie)).body)
    const before = h.q.batches().length
    expect((await push({ authorization: `Bearer ${key}` }, '/v1/contacts', body([sample]))).statusCode).toBe(202)
    expect(await handleBatchMessage(h.deps, h.q.batches()[before]!)).toBe('ack')
    const stored = await h.deps.contacts.getByAnchor(accountId, 'mapped', 'r-77')
    expect(stored).not.toBeNull()
    const preview = previewMapping('api', connection.field_mappings, await h.deps.tenants.listCustomFields(accountId), sample)
    expect(preview.mapped.externalId).toBe('r-77')
    expect(stored!.business_email).toBe(preview.mapped.patch.business_email)
    expect(stored!.identity).toMatchObject(preview.mapped.patch.identity!)
    for (const [k, v] of Object.entries(preview.mapped.patch.custom_fields!)) expect(stored!.custom_fields[k]?.value).toEqual(v.value)
    expect(Object.keys(stored!.custom_fields).sort()).toEqual(['plan', 'seats'])
  })

  it("another account's ids answer 404 on every page and action, and change nothing", async () => {
    const theirs = await admin('POST', `${ADMIN}/${otherId}/connections`, { type: 'api' })
    const theirKey = await admin('POST', `${ADMIN}/${otherId}/connections/${theirs.id}/keys`, {})
    const theirPartner = await admin('POST', `${ADMIN}/${otherId}/connections`, { type: 'partnercrm' })
    await admin('POST', `${ADMIN}/${otherId}/connections/${theirPartner.id}/locations`, { location_id: 'their-loc' })
    expect((await page(h.portal, `/portal/connections/${theirs.id}`, cookie)).statusCode).toBe(404)
    const posts: Array<[string, Record<string, string>]> = [
      [`/portal/connections/${theirs.id}/keys`, { scopes: 'contacts:write' }],
      [`/portal/connections/${theirs.id}/keys/${theirKey.id}/rotate`, { grace_seconds: '0' }],
      [`/portal/connections/${theirs.id}/keys/${theirKey.id}/revoke`, { grace_seconds: '0' }],
      [`/portal/connections/${theirs.id}/token/rotate`, {}],
      [`/portal/connections/${theirPartner.id}/locations`, { location_id: 'x' }],
      [`/portal/connections/${theirPartner.id}/locations/their-loc/rotate`, {}],
      [`/portal/connections/${theirPartner.id}/locations/their-loc/remove`, {}],
      [`/portal/connections/${theirPartner.id}/require-token`, { require_token: 'true' }],
      [`/portal/connections/${theirs.id}/mappings`, { from: 'a', to: 'email' }],
      [`/portal/connections/${theirs.id}/preview`, { from: 'a', to: 'email', sample: '{}' }],
    ]
    for (const [url, fields] of posts) {
      const res = await formPost(h.portal, url, cookie, fields)
      expect(res.statusCode, url).toBe(404)
      expect(res.body).toContain('Not found')
    }
    // their key still works, their location and connection are unchanged
    expect((await h.deps.tenants.getApiKey(theirKey.id))!.revoked_at).toBeNull()
    expect((await h.deps.tenants.getLocation(otherId, 'their-loc'))!.active).toBe(true)
    expect((await admin('GET', `${ADMIN}/${otherId}/connections/${theirPartner.id}`)).require_token).toBe(false)
  })

  it('every form post from another origin is refused (403) and changes nothing, even with a live session', async () => {
    const live = (await h.deps.tenants.listApiKeys(accountId)).find((k) => k.revoked_at === null)!
    const keyId = live.id
    const mine = { id: live.connection_id }
    const audited = (await admin('GET', `${ADMIN}/${accountId}/audit-log?limit=200`)).data.length
    const posts: Array<[string, Record<string, string>]> = [
      ['/portal/connections', { type: 'api' }],
      [`/portal/connections/${mine.id}/keys`, { scopes: 'contacts:write' }],
      [`/portal/connections/${mine.id}/keys/${keyId}/rotate`, {}],
      [`/portal/connections/${mine.id}/keys/${keyId}/revoke`, { grace_seconds: '0' }],
      [`/portal/connections/${mine.id}/token/rotate`, {}],
      [`/portal/connections/${mine.id}/locations`, { location_id: 'x' }],
      [`/portal/connections/${mine.id}/locations/x/rotate`, {}],
      [`/portal/connections/${mine.id}/locations/x/remove`, {}],
      [`/portal/connections/${mine.id}/require-token`, { require_token: 'true' }],
      [`/portal/connections/${mine.id}/mappings`, { from: 'a', to: 'email' }],
      [`/portal/connections/${mine.id}/preview`, { sample: '{}' }],
      ['/portal/settings/domains', { domains: 'evil.example' }],
      ['/portal/settings/custom-fields', { key: 'evil', label: 'Evil', type: 'text' }],
    ]
    for (const [url, fields] of posts) {
      const res = await formPost(h.portal, url, cookie, fields, 'https://evil.example')
      expect(res.statusCode, url).toBe(403)
      // no Origin but a cross-site fetch: refused as well
      const noOrigin = await h.portal.inject({
        method: 'POST',
        url,
        headers: { cookie, 'sec-fetch-site': 'cross-site', 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams(fields).toString(),
      })
      expect(noOrigin.statusCode, url).toBe(403)
    }
    expect((await h.deps.tenants.getApiKey(keyId))!.revoked_at).toBeNull()
    expect((await admin('GET', `${ADMIN}/${accountId}/audit-log?limit=200`)).data.length).toBe(audited)
    expect((await admin('GET', `${ADMIN}/${accountId}/authorized-domains`)).domains).not.toContain('evil.example')
  })

  it('the audit log holds each change (who, what, when) and none of the secrets shown; the portal and the management API list it newest first', async () => {
    const all = (await admin('GET', `${ADMIN}/${accountId}/audit-log?limit=200`)).data as Array<{
      action: string
      actor: string
      at: string
      target: Record<string, string>
    }>
    const actions = all.map((e) => e.action)
    for (const a of [
      'connection.create',
      'api_key.create',
      'api_key.rotate',
      'api_key.revoke',
      'source_token.rotate',
      'location.add',
      'connection.require_token',
      'location.remove',
      'connection.mappings',
      'custom_field.create',
    ]) {
      expect(actions, a).toContain(a)
    }
    expect(new Set(all.map((e) => e.actor)).size).toBe(1)
    expect(all[0]!.actor).toMatch(/^portal session [0-9a-f]{12}$/)
    expect([...all].sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0)).map((e) => e.at)).toEqual(all.map((e) => e.at))
    expect(secrets.length).toBeGreaterThanOrEqual(6)
    const raw = JSON.stringify(all)
    const pageHtml = (await page(h.portal, '/portal/audit', cookie)).body
    for (const s of secrets) {
      expect(raw).not.toContain(s)
      expect(pageHtml).not.toContain(s)
    }
    expect(pageHtml).toContain('api_key.rotate')
    // keyset pages over the management API: no entry skipped or repeated
    const seen: string[] = []
    let before: string | null = null
    do {
      const q: string = before ? `?limit=3&before=${before}` : '?limit=3'
      const p = await admin('GET', `${ADMIN}/${accountId}/audit-log${q}`)
      seen.push(...p.data.map((e: { id: string }) => e.id))
      before = p.next_before
    } while (before)
    expect(seen).toEqual(all.map((e) => (e as unknown as { id: string }).id))
    // the operator token is required; another account's log is its own
    expect((await h.portal.inject({ method: 'GET', url: `${ADMIN}/${accountId}/audit-log` })).statusCode).toBe(401)
    expect((await admin('GET', `${ADMIN}/${otherId}/audit-log`)).data).toEqual([])
  })
})
