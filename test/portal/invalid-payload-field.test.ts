import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { signIn } from './support.ts'

/** a table cell holding exactly this html (cells carry their column's label: kit/table-labels.ts) */
const cell = (inner: string) => new RegExp(`<td[^>]*>${inner.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}</td>`)
import { page } from './screens-support.ts'

/**
 * Issue 29, D12: the inbound debugger said only "invalid payload" for a refused push body. Now it
 * names the field and why, while the sender's answer stays the contract's envelope (4.3: `{ok,
 * error}`, no field). Pushed on a real edge app (its recorder flushes when it closes), read on the
 * connection's Recent pushes page.
 */
describe('portal: a refused push body names its field in the inbound debugger (issue 29, D12)', () => {
  let h: Harness
  let t: StoredTenant
  let cookie = ''

  beforeAll(async () => {
    h = await createHarness()
    t = await createTestTenant(h.deps)
    cookie = await signIn(h.portal, t.accountId)
  })
  afterAll(async () => {
    await t?.cleanup()
    await h?.close()
  })

  it('"invalid payload: /contacts not a list" and "/contacts/1 not a JSON object", the answers unchanged', async () => {
    const edge = await buildEdge(h.deps)
    const push = (payload: string) => edge.inject({ method: 'POST', url: '/v1/contacts', headers: t.keyHeaders(), payload })
    const notAList = await push(JSON.stringify({ contacts: 'not a list' }))
    const notARecord = await push(JSON.stringify({ contacts: [{ external_id: 'ok-1' }, 'not a record'] }))
    const missing = await push(JSON.stringify({ records: [] }))
    await edge.close()
    // the sender's answer is the contract's, naming no field
    for (const res of [notAList, notARecord, missing]) {
      expect(res.statusCode).toBe(400)
      expect(res.body).toBe('{"ok":false,"error":"invalid payload"}')
    }

    const res = await page(h.portal, `/portal/connections/${t.apiConnectionId}/pushes`, cookie)
    expect(res.statusCode).toBe(200)
    // mutation: the debugger's error cell without the field (the entry's problem dropped at the edge, the recorder or the page) fails each
    expect(res.body).toMatch(cell('invalid payload: <code>/contacts</code> not a list'))
    expect(res.body).toMatch(cell('invalid payload: <code>/contacts/1</code> not a JSON object (one record)'))
    expect(res.body).toMatch(cell('invalid payload: <code>/contacts</code> missing'))
  })

  it('a partner CRM body without a contact id: "invalid payload: /contactId no contact id"', async () => {
    const edge = await buildEdge(h.deps)
    const res = await edge.inject({
      method: 'POST',
      url: '/v1/contacts/partnercrm',
      headers: { host: t.host, 'content-type': 'application/json', 'x-webhook-token': t.locationToken },
      payload: JSON.stringify({ locationId: t.locationId, email: 'no-id@example.com' }),
    })
    await edge.close()
    expect(res.statusCode).toBe(400)
    expect(res.body).toBe('{"ok":false,"error":"invalid payload"}')
    const shown = await page(h.portal, `/portal/connections/${t.partnerConnectionId}/pushes`, cookie)
    // mutation: partner-crm-push.ts throwing a bare AppError again fails this
    expect(shown.body).toMatch(cell('invalid payload: <code>/contactId</code> no contact id (contactId, contact_id or id)'))
  })
})
