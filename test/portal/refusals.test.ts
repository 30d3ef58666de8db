import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '@lsv/shared/http/base-app.ts'
import { contactIdFor } from '@lsv/shared/model/ids.ts'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { handleBatchMessage } from '../../services/upsert-worker/src/handle-batch.ts'
import { freePort } from '../../scripts/lib/free-port.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { ADMIN, OPERATOR } from '../management/harness.ts'
import { signIn } from './support.ts'

/**
 * Nothing the tenant sent vanishes without a word (docs/portal.md, "Inbound debugger" and
 * "Missing, and why"): a push over real HTTP whose worker refuses a record (no external_id) and a
 * value (an email that is not one) shows "accepted N, refused M (why)" on the connection's
 * debugger and names the refused value on the contact page; a custom field pushed before its
 * mapping existed says so instead of "the sources sent no value". Pages read over HTTP as a
 * signed-in tenant.
 */
describe('refusals are outcomes: the debugger and the contact page name them', () => {
  let h: Harness
  let t: StoredTenant
  let edge: App
  let portal: App
  let edgeOrigin: string
  let portalOrigin: string
  let cookie: string

  beforeAll(async () => {
    const [edgePort, portalPort] = [await freePort(), await freePort()]
    edgeOrigin = `http://127.0.0.1:${edgePort}`
    portalOrigin = `http://127.0.0.1:${portalPort}`
    h = await createHarness({ config: { portalBaseUrl: portalOrigin } })
    t = await createTestTenant(h.deps, { customFields: [{ key: 'plan', type: 'text' }] })
    edge = await buildEdge(h.deps)
    portal = await buildPortal(h.deps)
    await edge.listen({ host: '127.0.0.1', port: edgePort })
    await portal.listen({ host: '127.0.0.1', port: portalPort })
    cookie = await signIn(h.portal, t.account.id)
  })
  afterAll(async () => {
    await edge?.close()
    await portal?.close()
    await t?.cleanup()
    await h?.close()
  })

  /** POST /v1/contacts over HTTP, then the worker applies the batch it queued. */
  async function push(contacts: unknown[]): Promise<void> {
    const before = h.q.batches().length
    // node's http client: fetch does not send a Host header of its own, and the edge finds the account by it
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${edgeOrigin}/v1/contacts`, { method: 'POST', headers: t.keyHeaders() }, (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      })
      req.on('error', reject)
      req.end(JSON.stringify({ contacts }))
    })
    expect(status).toBe(202)
    const message = h.q.batches()[before]!
    expect(message.attributes.request_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(await handleBatchMessage(h.deps, message)).toBe('ack')
  }

  const read = async (path: string) => {
    const res = await fetch(`${portalOrigin}${path}`, { headers: { cookie } })
    expect(res.status).toBe(200)
    return res.text()
  }

  it('the inbound debugger says "accepted N, refused M (why)", and the contact page names the refused email', async () => {
    await push([{ external_id: 'r-1', email: 'ann-at-example', first_name: 'Ann' }, { first_name: 'No Id' }, { external_id: 'r-2', email: 'bo@example.com' }])
    // the edge writes its debugger entries a moment after the answer
    let debuggerPage = ''
    const listed = () => debuggerPage.includes('<td data-label="Status"><span class="badge ok">202')
    for (let i = 0; i < 100 && !listed(); i++) {
      debuggerPage = await read(`/portal/connections/${t.api.id}/pushes`)
      if (!listed()) await new Promise((r) => setTimeout(r, 100))
    }
    // mutation: without the worker's write-back the row says only "2" (the edge's count)
    expect(debuggerPage).toContain('accepted 2, refused 2 (')
    expect(debuggerPage).toContain('record 2: no external_id')
    expect(debuggerPage).toMatch(/<code>r-1<\/code>: email <code>ann-at-example<\/code> not an email address/)

    const contactPage = await read(`/contacts/${contactIdFor(t.account.id, t.api.source, 'r-1')}`)
    const emailRow = /<tr><td[^>]*><code>handles\.business_email<\/code><\/td><td[^>]*>([\s\S]*?)<\/td><\/tr>/.exec(contactPage)?.[1] ?? ''
    // mutation: without the note the row says enrichment "may still fill" the email that was sent
    expect(emailRow).toMatch(/sent email (&quot;|")ann-at-example(&quot;|"), which was refused: not an email address/)
    expect(emailRow).not.toContain('may still fill')
    // the push's time in the portal's one time format, not raw ISO (docs/portal.md, "Times and ids")
    expect(emailRow).toMatch(/^<code>[a-z_]+<\/code>: The push of <time class="ago" datetime="[^"]+"/)
  })

  it('D2: a custom field pushed before its mapping existed says so, not "the sources sent no value"', async () => {
    await push([{ external_id: 'd2-1', first_name: 'Dee', plan: 'gold' }])
    const res = await h.portal.inject({
      method: 'PATCH',
      url: `${ADMIN}/${t.account.id}/connections/${t.api.id}`,
      headers: OPERATOR,
      payload: {
        field_mappings: [
          { from: 'external_id', to: 'external_id' },
          { from: 'first_name', to: 'first_name' },
          { from: 'plan', to: 'custom_fields.plan' },
        ],
      },
    })
    expect(res.statusCode).toBe(200)
    const contactPage = await read(`/contacts/${contactIdFor(t.account.id, t.api.source, 'd2-1')}`)
    const planRow = /<tr><td[^>]*><code>custom_fields\.plan<\/code><\/td><td[^>]*>([\s\S]*?)<\/td><\/tr>/.exec(contactPage)?.[1] ?? ''
    expect(planRow).toContain('<code>no_source</code>')
    // mutation: without the note this is "the sources that wrote this person sent no value for it", which is false
    expect(planRow).toContain('Sent before the mapping for this field existed')
    expect(planRow).toContain('plan → custom_fields.plan')
    expect(planRow).not.toContain('sent no value')
    // when it was pushed and when the mappings were saved, each in the portal's one time format
    expect(planRow).toMatch(/last pushed <time class="ago" [^>]*>[\s\S]*?<\/time>, and the mappings of .* were saved <time class="ago" /)
    expect(planRow.replace(/ datetime="[^"]*"/g, '')).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/)
    // pushed again, the mapping reads it
    await push([{ external_id: 'd2-1', plan: 'gold' }])
    expect(await read(`/contacts/${contactIdFor(t.account.id, t.api.source, 'd2-1')}`)).toContain('gold')
  })
})
