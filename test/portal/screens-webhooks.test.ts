import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { createIngestFixture, type IngestFixture } from '../ingest/support/harness.ts'
import { ADMIN, OPERATOR } from '../management/harness.ts'
import { drainDueTasks, startReceiver } from '../outbound/harness.ts'
import { listAudit } from '@lsv/shared/domain/audit/record.ts'
import { createDelivery } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { sendTestEvent } from '@lsv/shared/domain/webhooks/test-event.ts'
import { signIn } from './support.ts'
import { formPost, page } from './screens-support.ts'
import { followReveal } from './reveal-support.ts'

/**
 * The Webhooks screen through app.inject: every action is the management API's (same domain
 * function, same stored result), scoped to the session's account (another account's ids: 404),
 * every POST same-origin only, every change in the audit log without the secret.
 */
describe('portal screen: webhooks', () => {
  let fixture: IngestFixture
  let cookie: string
  let otherCookie: string
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let integrationId: string
  let createdSecret: string
  const mgmt = (path: string) => fixture.h.portal.inject({ method: 'GET', url: `${ADMIN}/${fixture.t.account.id}${path}`, headers: OPERATOR })

  beforeAll(async () => {
    fixture = await createIngestFixture()
    cookie = await signIn(fixture.h.portal, fixture.t.account.id)
    otherCookie = await signIn(fixture.h.portal, fixture.other.account.id)
    receiver = await startReceiver((r) => ({ status: r.body.includes('"gone"') ? 410 : 200 }))
  })
  afterAll(async () => {
    await receiver?.close()
    await fixture?.close()
  })

  it('without a session the screen sends to the sign-in page; a form post is refused', async () => {
    const res = await fixture.h.portal.inject({ method: 'GET', url: '/portal/webhooks' })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/portal/')
    expect((await formPost(fixture.h.portal, '/portal/webhooks', 'lsv_portal=nope', { url: receiver.url })).statusCode).toBe(401)
  })

  it('creates a webhook as the management API does, shows the secret once on the page its redirect leads to, and audits it without the secret', async () => {
    const answer = await formPost(fixture.h.portal, '/portal/webhooks', cookie, { url: receiver.url, payload_version: '2', contact_handles: 'on' })
    const res = await followReveal(fixture.h.portal, answer, cookie)
    createdSecret = /whsec_[A-Za-z0-9+/=]+/.exec(res.body)![0]
    const list = (await mgmt('/integrations')).json() as { data: Array<{ id: string; url: string; tiers: object; payload_version: number; active: boolean }> }
    expect(list.data).toHaveLength(1)
    expect(list.data[0]).toMatchObject({ url: receiver.url, payload_version: 2, active: true, tiers: { contact_handles: true, sensitive_traits: false } })
    integrationId = list.data[0]!.id
    expect(res.body).toContain(`/portal/webhooks/${integrationId}`)
    const audit = await listAudit(fixture.h.deps, fixture.t.account.id, { limit: 10 })
    const entry = audit.data.find((e) => e.action === 'integration.created')!
    expect(entry.target).toEqual({ integration_id: integrationId })
    // what it is about without the URL itself (its path or query may hold the receiver's token)
    expect(entry.details).toMatchObject({ host: new URL(receiver.url).host, payload_version: 2, contact_handles: true })
    expect(JSON.stringify(entry)).not.toContain(receiver.url)
    expect(entry.actor).toMatch(/^portal session [0-9a-f]{12}$/)
    expect(JSON.stringify(audit.data)).not.toContain(createdSecret)
    // the page listing it never shows the secret again
    expect((await page(fixture.h.portal, '/portal/webhooks', cookie)).body).not.toContain(createdSecret)
  })

  it('refuses a tier the plan does not permit, like the management API (nothing stored)', async () => {
    await fixture.h.deps.tenants.updateAccount(fixture.t.account.id, { permitted_tiers: [1, 2] })
    const res = await formPost(fixture.h.portal, '/portal/webhooks', cookie, { url: receiver.url, payload_version: '2', sensitive_traits: 'on' })
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('tier 3 is not permitted for this account')
    expect(((await mgmt('/integrations')).json() as { data: unknown[] }).data).toHaveLength(1)
    await fixture.h.deps.tenants.updateAccount(fixture.t.account.id, { permitted_tiers: [1, 2, 3] })
  })

  it('edits url, version, tiers and active; the change is what GET …/integrations/{id} returns', async () => {
    const res = await formPost(fixture.h.portal, `/portal/webhooks/${integrationId}`, cookie, {
      url: `${receiver.url}?v=2`,
      payload_version: '2',
      sensitive_traits: 'on',
      active: 'on',
    })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(`/portal/webhooks/${integrationId}?flash=integration-updated`)
    expect((await mgmt(`/integrations/${integrationId}`)).json()).toMatchObject({
      url: `${receiver.url}?v=2`,
      tiers: { contact_handles: false, sensitive_traits: true },
      active: true,
    })
    const updated = (await listAudit(fixture.h.deps, fixture.t.account.id, { limit: 10 })).data.find((e) => e.action === 'integration.updated')!
    expect(updated.details).toEqual({ host: new URL(receiver.url).host, payload_version: 2, contact_handles: false, sensitive_traits: true, active: true })
    await formPost(fixture.h.portal, `/portal/webhooks/${integrationId}`, cookie, {
      url: receiver.url,
      payload_version: '2',
      contact_handles: 'on',
      active: 'on',
    })
  })

  it('every POST must be same-origin: a cross-site form changes nothing (403)', async () => {
    const before = (await mgmt(`/integrations/${integrationId}`)).body
    for (const path of ['', '/enable', '/secret/reveal', '/secret/rotate', '/test', '/deliveries/dlv_x/replay']) {
      const res = await formPost(
        fixture.h.portal,
        `/portal/webhooks${path === '' ? '' : `/${integrationId}`}${path}`,
        cookie,
        { url: 'https://evil.example/' },
        'https://evil.example',
      )
      expect(res.statusCode, path).toBe(403)
      expect(res.body).not.toMatch(/whsec_[A-Za-z0-9]/)
    }
    expect((await mgmt(`/integrations/${integrationId}`)).body).toBe(before)
    expect(((await mgmt('/integrations')).json() as { data: unknown[] }).data).toHaveLength(1)
  })

  it("another account's session gets 404 for every id of this one, and changes nothing", async () => {
    expect((await page(fixture.h.portal, `/portal/webhooks/${integrationId}`, otherCookie)).statusCode).toBe(404)
    for (const path of ['', '/enable', '/secret/reveal', '/secret/rotate', '/test', '/deliveries/dlv_x/replay']) {
      const res = await formPost(fixture.h.portal, `/portal/webhooks/${integrationId}${path}`, otherCookie, { url: receiver.url, grace_seconds: '0' })
      expect(res.statusCode, path).toBe(404)
      expect(res.body).not.toMatch(/whsec_[A-Za-z0-9]/)
    }
    expect((await page(fixture.h.portal, '/portal/webhooks/int_unknown', cookie)).statusCode).toBe(404)
  })

  it('reveal shows the current secret (audited); rotate keeps the old one signing during the grace', async () => {
    const revealed = await followReveal(fixture.h.portal, await formPost(fixture.h.portal, `/portal/webhooks/${integrationId}/secret/reveal`, cookie), cookie)
    expect(revealed.body).toContain(createdSecret)
    const rotatedAnswer = await formPost(fixture.h.portal, `/portal/webhooks/${integrationId}/secret/rotate`, cookie, { grace_seconds: '3600' })
    const rotated = await followReveal(fixture.h.portal, rotatedAnswer, cookie)
    const fresh = /whsec_[A-Za-z0-9+/=]+/.exec(rotated.body)![0]
    expect(fresh).not.toBe(createdSecret)
    const stored = (await fixture.h.deps.tenants.getIntegration(integrationId))!
    expect(stored.signing_secrets.map((s) => s.secret)).toEqual([fresh, createdSecret])
    expect(Date.parse(stored.signing_secrets[1]!.expires_at!)).toBeGreaterThan(Date.now() + 3500_000)
    const actions = (await listAudit(fixture.h.deps, fixture.t.account.id, { limit: 20 })).data.map((e) => e.action)
    expect(actions).toEqual(expect.arrayContaining(['integration.secret_revealed', 'integration.secret_rotated']))
    expect(JSON.stringify(await listAudit(fixture.h.deps, fixture.t.account.id, { limit: 20 }))).not.toMatch(/whsec_/)
    // an unknown grace is refused, nothing rotates
    expect((await formPost(fixture.h.portal, `/portal/webhooks/${integrationId}/secret/rotate`, cookie, { grace_seconds: '5' })).statusCode).toBe(400)
    createdSecret = fresh
  })

  it('sends a test event through the signed path; it shows in the delivery log (filterable); replay sends it again', async () => {
    const sent = await formPost(fixture.h.portal, `/portal/webhooks/${integrationId}/test`, cookie)
    expect(sent.statusCode).toBe(303)
    const n = receiver.requests.length
    await drainDueTasks(fixture.h.deps)
    expect(receiver.requests.length).toBe(n + 1)
    const got = receiver.requests.at(-1)!
    expect(new Webhook(createdSecret).verify(got.body, got.headers as Record<string, string>)).toMatchObject({ classification: 'test' })
    const eventId = JSON.parse(got.body).id as string
    const detail = await page(fixture.h.portal, `/portal/webhooks/${integrationId}?status=succeeded`, cookie)
    expect(detail.body).toContain(eventId)
    expect((await page(fixture.h.portal, `/portal/webhooks/${integrationId}?status=failed`, cookie)).body).not.toContain(eventId)
    const log = (await mgmt(`/integrations/${integrationId}/deliveries`)).json() as { data: Array<{ id: string; event_id: string; attempts: unknown[] }> }
    const delivery = log.data.find((d) => d.event_id === eventId)!
    const replay = await formPost(fixture.h.portal, `/portal/webhooks/${integrationId}/deliveries/${delivery.id}/replay`, cookie)
    expect(replay.statusCode).toBe(303)
    await drainDueTasks(fixture.h.deps)
    expect(receiver.requests.length).toBe(n + 2)
    expect(JSON.parse(receiver.requests.at(-1)!.body).id).toBe(eventId)
    const after = (await mgmt(`/integrations/${integrationId}/deliveries`)).json() as { data: Array<{ id: string; attempts: unknown[] }> }
    expect(after.data.find((d) => d.id === delivery.id)!.attempts).toHaveLength(2)
  })

  it('an integration disabled by a 410 says why and can be re-enabled', async () => {
    await fixture.h.deps.tenants.updateIntegration(integrationId, { active: false, disabled_reason: 'endpoint answered 410' })
    const detail = await page(fixture.h.portal, `/portal/webhooks/${integrationId}`, cookie)
    expect(detail.body).toContain('answered 410 Gone')
    expect((await formPost(fixture.h.portal, `/portal/webhooks/${integrationId}/test`, cookie)).statusCode).toBe(409)
    const res = await formPost(fixture.h.portal, `/portal/webhooks/${integrationId}/enable`, cookie)
    expect(res.statusCode).toBe(303)
    expect((await mgmt(`/integrations/${integrationId}`)).json()).toMatchObject({ active: true, disabled_reason: null })
  })

  describe('the delivery log: pages of 20 and filters', () => {
    // 25 real deliveries an hour ago, a second apart, then 3 test events now: newest first, the
    // test events lead. Their tasks are never run (nothing drains them): all stay pending.
    let logId: string
    const real = Array.from({ length: 25 }, (_, i) => `evt_real_${String(i).padStart(2, '0')}`)
    let tests: string[] = []
    /** the event ids of the log's rows on a page, in order, and its "Older" link */
    const logOf = async (query: string) => {
      const res = await page(fixture.h.portal, `/portal/webhooks/${logId}${query}`, cookie)
      expect(res.statusCode, res.body).toBe(200)
      const section = res.body.slice(res.body.indexOf('id="deliveries"'))
      const ids = [...section.matchAll(/<tr>\n<td[^>]*><code[^>]*>([^<]+)<\/code>/g)].map((m) => m[1]!)
      // the link's query, as a browser requests it (no fragment)
      const older = /<a href="([^"]+)" rel="next">Older<\/a>/.exec(section)?.[1]?.replace(/&amp;/g, '&').replace(/#.*$/, '') ?? null
      return { ids, older: older === null ? null : older.slice(older.indexOf('?')), body: res.body }
    }
    /** every page from `query` on, following "Older" */
    const allPages = async (query: string) => {
      const pages: string[][] = []
      for (let next: string | null = query; next !== null; ) {
        const p = await logOf(next)
        pages.push(p.ids)
        next = p.older
        expect(pages.length).toBeLessThan(10)
      }
      return pages
    }

    beforeAll(async () => {
      const created = await formPost(fixture.h.portal, '/portal/webhooks', cookie, { url: `${receiver.url}?log=1`, payload_version: '2' })
      expect(created.statusCode).toBe(303)
      logId = ((await mgmt('/integrations')).json() as { data: Array<{ id: string; url: string }> }).data.find((i) => i.url.endsWith('?log=1'))!.id
      const base = Date.now() - 3_600_000
      for (const [i, eventId] of real.entries()) {
        await createDelivery(fixture.h.deps, {
          accountId: fixture.t.account.id,
          integrationId: logId,
          eventId,
          body: '{}',
          now: new Date(base + i * 1000).toISOString(),
        })
      }
      for (let i = 0; i < 3; i++) tests.push((await sendTestEvent(fixture.h.deps, fixture.t.account.id, logId)).event_id)
      tests = tests.sort()
    })

    it('pages through "Older": 20, then the other 8, none twice, none left out, newest first', async () => {
      const pages = await allPages('')
      expect(pages.map((p) => p.length)).toEqual([20, 8])
      const seen = pages.flat()
      expect(new Set(seen).size).toBe(seen.length)
      expect([...seen.slice(0, 3)].sort()).toEqual(tests)
      expect(seen.slice(3)).toEqual([...real].reverse())
      // the first page has no "Newest" link, a later one does
      expect((await logOf('')).body).not.toContain('>Newest</a>')
      expect((await logOf((await logOf('')).older!)).body).toContain('>Newest</a>')
      // where the tenant is, without counting the log (mutation: drop the pager's page from the
      // Older link → page 2 says "Page 1 · deliveries 1–8")
      expect((await logOf('')).body).toContain('Page 1 · deliveries 1–20 · 20 per page')
      expect((await logOf((await logOf('')).older!)).body).toContain('Page 2 · deliveries 21–28 · 20 per page')
    })

    it('a page link it did not make: 400 in words, with the way back', async () => {
      for (const bad of ['?page=0', '?page=x', '?page=9999999']) {
        const res = await page(fixture.h.portal, `/portal/webhooks/${logId}${bad}`, cookie)
        // mutation: no pageNumberOf check → 200 with "Page NaN"
        expect(res.statusCode, bad).toBe(400)
        expect(res.body).toContain('That page link is not one the portal made')
        expect(res.body).toContain(`href="/portal/webhooks/${logId}#deliveries"`)
      }
    })

    it('filters by test or real events; the pager keeps the filter', async () => {
      expect(await allPages('?kind=test')).toEqual([expect.arrayContaining(tests)])
      expect((await logOf('?kind=test')).ids).toHaveLength(3)
      const realPages = await allPages('?kind=real')
      expect(realPages.map((p) => p.length)).toEqual([20, 5])
      expect(realPages.flat()).toEqual([...real].reverse())
      expect((await logOf('?kind=real')).older).toMatch(/^\?kind=real&cursor=/)
      // the Newest link keeps the filter (mutation: firstQuery dropped → back to every kind)
      expect((await logOf((await logOf('?kind=real')).older!)).body).toContain(`href="/portal/webhooks/${logId}?kind=real#deliveries">Newest</a>`)
      // with the status filter too: every delivery here is pending
      expect((await logOf('?kind=test&status=pending')).ids).toHaveLength(3)
      const none = await logOf('?kind=real&status=succeeded')
      expect(none.ids).toEqual([])
      expect(none.body).toContain('No deliveries with status succeeded, among real events.')
      // the form shows the filters in force
      expect((await logOf('?kind=real')).body).toContain('<option value="real" selected>')
    })

    it("finds one event by its exact id, only in this webhook's log", async () => {
      const one = await logOf(`?event_id=${real[7]}`)
      expect(one.ids).toEqual([real[7]])
      expect(one.older).toBeNull()
      expect(one.body).toContain(`value="${real[7]}"`)
      expect((await logOf(`?event_id=${tests[0]}&kind=test`)).ids).toEqual([tests[0]])
      // exact, not a prefix; the other filters still apply; another webhook's event is not here
      expect((await logOf('?event_id=evt_real_0')).ids).toEqual([])
      const wrongKind = await logOf(`?event_id=${real[7]}&kind=test`)
      expect(wrongKind.ids).toEqual([])
      expect(wrongKind.body).toContain(`No deliveries for event ${real[7]}, among test events.`)
      const elsewhere = ((await mgmt(`/integrations/${integrationId}/deliveries`)).json() as { data: Array<{ event_id: string }> }).data[0]!.event_id
      expect((await logOf(`?event_id=${encodeURIComponent(elsewhere)}`)).ids).toEqual([])
      // a blank event id is no filter (the form sends every field)
      expect((await logOf('?status=&kind=&event_id=')).ids).toHaveLength(20)
    })

    it('the management API filters the same way (kind, event_id)', async () => {
      const list = async (q: string) =>
        (await mgmt(`/integrations/${logId}/deliveries${q}`)).json() as { data: Array<{ event_id: string }>; next_cursor: string | null }
      expect((await list('?kind=test')).data.map((d) => d.event_id).sort()).toEqual(tests)
      const realFirst = await list('?kind=real&limit=100')
      expect(realFirst.data.map((d) => d.event_id)).toEqual([...real].reverse())
      expect(await list(`?event_id=${real[3]}`)).toMatchObject({ data: [{ event_id: real[3] }], has_more: false, next_cursor: null })
      expect((await list(`?event_id=${real[3]}&status=failed`)).data).toEqual([])
      expect((await mgmt(`/integrations/${logId}/deliveries?kind=fake`)).statusCode).toBe(400)
      // another account's session sees nothing of this log
      expect((await page(fixture.h.portal, `/portal/webhooks/${logId}?event_id=${real[3]}`, otherCookie)).statusCode).toBe(404)
    })
  })
})
