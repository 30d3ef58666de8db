import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { body, createHarness, type Harness, record } from '../ingest/support/harness.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { drainDueTasks, startReceiver } from '../outbound/harness.ts'
import { handleBatchMessage } from '../../services/upsert-worker/src/handle-batch.ts'
import { signIn } from './support.ts'
import { formPost, page } from './screens-support.ts'
import { followReveal, secretIn } from './reveal-support.ts'

const STEPS = ['domain', 'key', 'push', 'endpoint', 'delivery'] as const
type Step = (typeof STEPS)[number]

/** Each checklist step's state as the page says it ("Done" / "To do") and the link a to-do step offers. */
function checklistOf(html: string): Record<Step, { done: boolean; link: string | null }> {
  const out = {} as Record<Step, { done: boolean; link: string | null }>
  for (const step of STEPS) {
    const item = new RegExp(`<li class="(done|todo)" data-step="${step}">([\\s\\S]*?)</li>`).exec(html)
    expect(item, `step ${step} on the overview`).not.toBeNull()
    const state = /<span class="state">(Done|To do)<\/span>/.exec(item![2]!)![1]
    // the class and the words say the same (colour is never the only signal)
    expect(state === 'Done').toBe(item![1] === 'done')
    out[step] = { done: state === 'Done', link: /<a href="([^"]+)">/.exec(item![2]!)?.[1] ?? null }
  }
  return out
}

/** A health figure by its data-figure name. */
function figure(html: string, name: string): string {
  const m = new RegExp(`data-figure="${name}"[^>]*>([^<]*)</dd>`).exec(html)
  expect(m, `figure ${name}`).not.toBeNull()
  return m![1]!
}

/**
 * The overview (GET /portal/, the landing page after sign-in) walks a new tenant through setup:
 * each step flips when its action is done through the portal's own routes and the real edge,
 * worker and dispatcher, and the health figures count what happened. Another account that has
 * everything set up changes nothing on this account's overview.
 */
describe('portal overview: setup checklist and health', () => {
  let h: Harness
  let t: StoredTenant
  let other: StoredTenant
  let cookie: string
  let ok: Awaited<ReturnType<typeof startReceiver>>
  let gone: Awaited<ReturnType<typeof startReceiver>>
  const overview = async () => {
    const res = await page(h.portal, '/portal/', cookie)
    expect(res.statusCode, res.body).toBe(200)
    return res.body
  }
  /** the overview once the edge's batched push counts (written every 2 s) show `accepted` and `refused` */
  const overviewCounting = async (accepted: string, refused: string) => {
    for (let i = 0; i < 100; i++) {
      const html = await overview()
      if (figure(html, 'pushes-accepted') === accepted && figure(html, 'pushes-refused') === refused) return html
      await new Promise((r) => setTimeout(r, 200))
    }
    throw new Error(`the overview never counted ${accepted} accepted and ${refused} refused pushes`)
  }

  beforeAll(async () => {
    h = await createHarness()
    t = (await createTestTenant(h.deps, ACCOUNT_ONLY)) as StoredTenant
    // everything set up, on another account: none of it may show here
    other = (await createTestTenant(h.deps, { integration: { url: 'https://receiver.example/hook' } })) as StoredTenant
    cookie = await signIn(h.portal, t.account.id)
    ok = await startReceiver(() => ({ status: 200 }))
    gone = await startReceiver(() => ({ status: 410 }))
  })
  afterAll(async () => {
    await ok?.close()
    await gone?.close()
    await t?.cleanup()
    await other?.cleanup()
    await h?.close()
  })

  it('a new account: every step to do, each linking to where it is done; the navigation marks Overview only', async () => {
    const html = await overview()
    const steps = checklistOf(html)
    // mutation: a step computed from another account, or always done, makes one of these Done
    for (const s of STEPS) expect(steps[s].done, s).toBe(false)
    expect(steps.domain.link).toBe('/portal/settings#dom-h')
    expect(steps.key.link).toBe('/portal/connections#new-h')
    expect(steps.endpoint.link).toBe('/portal/webhooks#new-h')
    expect(html).toContain('0 of 5 done.')
    for (const name of ['pushes-accepted', 'pushes-refused', 'deliveries-succeeded', 'deliveries-failed', 'endpoints-disabled'])
      expect(figure(html, name)).toBe('0')
    // mutation: the layout's startsWith for the home marks every entry current
    expect(html.match(/aria-current="page"/g)).toHaveLength(1)
    expect(html).toContain('<a href="/portal/" aria-current="page">Overview</a>')
  })

  it('walks the checklist: each step flips when its action is done through the real routes', async () => {
    // 1. authorized domain, through the Settings form
    expect((await formPost(h.portal, '/portal/settings/domains', cookie, { domains: 'example.com' })).statusCode).toBe(303)
    let steps = checklistOf(await overview())
    expect(steps.domain.done).toBe(true)
    expect(steps.key.done).toBe(false)

    // 2. an API connection (the key step now links to its keys), then a key on it
    const created = await formPost(h.portal, '/portal/connections', cookie, { type: 'api' })
    expect(created.statusCode).toBe(303)
    const connectionPath = String(created.headers.location).split('?')[0]!
    steps = checklistOf(await overview())
    expect(steps.key).toEqual({ done: false, link: `${connectionPath}#keys-h` })
    const shown = await followReveal(h.portal, await formPost(h.portal, `${connectionPath}/keys`, cookie, { scopes: 'contacts:write' }), cookie)
    const key = secretIn(shown.body)
    steps = checklistOf(await overview())
    // mutation: counting a revoked or no key as live leaves this (or the step before) wrong
    expect(steps.key.done).toBe(true)
    expect(steps.push.done).toBe(false)

    // 3. a push through the edge with that key, stored by the worker; one refused push beside it
    const headers = { host: t.host, authorization: `Bearer ${key}`, 'content-type': 'application/json' }
    const before = h.q.batches().length
    expect((await h.edge.inject({ method: 'POST', url: '/v1/contacts', headers, payload: body([record(1)]) })).statusCode).toBe(202)
    expect((await h.edge.inject({ method: 'POST', url: '/v1/contacts', headers, payload: '{"contacts": [' })).statusCode).toBe(400)
    expect(await handleBatchMessage(h.deps, h.q.batches()[before]!)).toBe('ack')
    // mutation: the push step read from another account's contacts or counts stays (or starts) wrong
    const counted = await overviewCounting('1', '1')
    expect(checklistOf(counted).push.done).toBe(true)
    expect(checklistOf(counted).endpoint.done).toBe(false)

    // 4. a webhook endpoint, through the Webhooks form; the delivery step then links to its test event
    const addWebhook = async (url: string) => {
      const added = await followReveal(h.portal, await formPost(h.portal, '/portal/webhooks', cookie, { url, payload_version: '2' }), cookie)
      // the reveal page's way back (the account's banner may name another, disabled, webhook first)
      return /href="(\/portal\/webhooks\/[^"#?]+)">Go to the webhook</.exec(added.body)![1]!
    }
    const gonePath = await addWebhook(gone.url)
    steps = checklistOf(await overview())
    expect(steps.endpoint.done).toBe(true)
    expect(steps.delivery).toEqual({ done: false, link: `${gonePath}#test-h` })

    // 5a. its test event is answered 410: the delivery failed and the endpoint is disabled; the step
    // stays to do, and the health shows both, the endpoint linked with the reason
    expect((await formPost(h.portal, `${gonePath}/test`, cookie)).statusCode).toBe(303)
    await drainDueTasks(h.deps)
    expect(gone.requests).toHaveLength(1)
    const failed = await overview()
    // mutation: the step done for any delivery (not a succeeded one) makes this Done
    expect(checklistOf(failed).delivery.done).toBe(false)
    // mutation: a failed delivery tallied as succeeded, or disabled endpoints not counted
    expect(figure(failed, 'deliveries-failed')).toBe('1')
    expect(figure(failed, 'deliveries-succeeded')).toBe('0')
    expect(figure(failed, 'endpoints-disabled')).toBe('1')
    expect(failed).toContain(`<a href="${gonePath}">${gone.url}</a> (endpoint answered 410)`)

    // 5b. another endpoint; the step links to it (the first active one); its test event is answered 200
    const okPath = await addWebhook(ok.url)
    expect(checklistOf(await overview()).delivery).toEqual({ done: false, link: `${okPath}#test-h` })
    expect((await formPost(h.portal, `${okPath}/test`, cookie)).statusCode).toBe(303)
    await drainDueTasks(h.deps)
    expect(ok.requests).toHaveLength(1)
    const done = await overview()
    expect(checklistOf(done).delivery.done).toBe(true)
    expect(done).toContain('Everything is set up.')
    expect(figure(done, 'deliveries-succeeded')).toBe('1')
    expect(figure(done, 'deliveries-failed')).toBe('1')
  })

  it('without a session, the home says to sign in and reads nothing of the account', async () => {
    const res = await h.portal.inject({ method: 'GET', url: '/portal/' })
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('Not signed in')
    expect(res.body).not.toContain('data-step=')
  })
})
