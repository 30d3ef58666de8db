import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { body, createIngestFixture, type IngestFixture, record } from '../ingest/support/harness.ts'
import { signIn } from './support.ts'
import { page } from './screens-support.ts'

/**
 * Issue 29, D12: the overview's "Pushes refused N" and the Activity screen lead to the inbound
 * debugger, where each refused push says why. Real edge answers (a refused push, an accepted
 * one) through app.inject; the overview names only the connection whose pushes were refused.
 */
describe('portal: refused pushes lead to the inbound debugger', () => {
  let fixture: IngestFixture
  let cookie: string
  const pushesPath = (connectionId: string) => `/portal/connections/${connectionId}/pushes`

  beforeAll(async () => {
    fixture = await createIngestFixture()
    cookie = await signIn(fixture.h.portal, fixture.t.account.id)
  })
  afterAll(async () => {
    await fixture?.close()
  })

  /** the overview once the edge's batched counts and push log show the refused push (both written every 2 s) */
  const overviewShowing = async (expected: string) => {
    for (let i = 0; i < 100; i++) {
      const res = await page(fixture.h.portal, '/portal/', cookie)
      if (res.body.includes(expected)) return res.body
      await new Promise((r) => setTimeout(r, 200))
    }
    throw new Error(`the overview never showed ${expected}`)
  }

  // mutation: refusedLinks gone from the overview → the figure has no link, and this times out
  it('the overview links "Pushes refused" to the debugger of the connection that refused them, which says why', async () => {
    const t = fixture.t
    expect((await fixture.h.edge.inject({ method: 'POST', url: '/v1/contacts', headers: t.keyHeaders(), payload: body([record(1)]) })).statusCode).toBe(202)
    expect((await fixture.h.edge.inject({ method: 'POST', url: '/v1/contacts', headers: t.keyHeaders(), payload: '{"contacts": [' })).statusCode).toBe(400)
    const html = await overviewShowing(`<a href="${pushesPath(t.apiConnectionId)}">See why in the inbound debugger</a>`)
    expect(html).toMatch(/data-figure="pushes-refused" class="bad">1<\/dd><dd class="figure-links" id="refused-pushes">/)
    // only the connection that refused: the webhook source and the partner connection pushed nothing
    for (const other of [t.webhookConnectionId, t.partnerConnectionId]) expect(html).not.toContain(`href="${pushesPath(other)}"`)
    // followed: the debugger lists the refused push with its answer
    const debuggerPage = await page(fixture.h.portal, pushesPath(t.apiConnectionId), cookie)
    expect(debuggerPage.statusCode).toBe(200)
    expect(debuggerPage.body).toContain('<span class="badge bad">400')
  })

  it('without a refused push the figure links nowhere', async () => {
    const other = await signIn(fixture.h.portal, fixture.other.account.id)
    const html = (await page(fixture.h.portal, '/portal/', other)).body
    expect(html).toMatch(/data-figure="pushes-refused" class="">0<\/dd><\/div>/)
    expect(html).not.toContain('id="refused-pushes"')
  })

  // mutation: debuggerLinks gone from Activity → none of these links
  it("Activity links each connection's inbound debugger under the pushes per day", async () => {
    const res = await page(fixture.h.portal, '/portal/activity', cookie)
    expect(res.statusCode).toBe(200)
    const section = res.body.slice(res.body.indexOf('id="pushes-h"'), res.body.indexOf('id="dead-h"'))
    const t = fixture.t
    for (const id of [t.apiConnectionId, t.webhookConnectionId, t.partnerConnectionId]) expect(section).toContain(`href="${pushesPath(id)}"`)
  })
})
