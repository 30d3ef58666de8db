import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { handleBatchMessage } from '../../services/upsert-worker/src/handle-batch.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { body, createHarness, type Harness } from '../ingest/support/harness.ts'
import { signIn } from './support.ts'
import { page } from './screens-support.ts'

/**
 * Issue 29, D12: a contact whose name came from an API push said "Name from: manual", which a
 * tenant reads as "typed in by hand". The contract's class (`manual`: any inbound connection's
 * push, docs/ingestion.md) stays, with the words that name the push. Pushed on the edge with an
 * API key, stored by the upsert worker, read on the contact's page.
 */
describe('portal: "Name from" names the inbound push (issue 29, D12)', () => {
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

  it('a contact named by an API push says the name came from your own system through an inbound connection', async () => {
    const before = h.q.batches().length
    const pushed = await h.edge.inject({
      method: 'POST',
      url: '/v1/contacts',
      headers: t.keyHeaders(),
      payload: body([{ external_id: 'nf-1', email: 'nora@example.com', first_name: 'Nora', last_name: 'Field' }]),
    })
    expect(pushed.statusCode, pushed.body).toBe(202)
    expect(await handleBatchMessage(h.deps, h.q.batches()[before]!)).toBe('ack')
    const stored = await h.deps.contacts.getByAnchor(t.accountId, t.apiSource, 'nf-1')
    expect(stored?.name_source).toBe('manual')

    const res = await page(h.portal, `/contacts/${stored!.id}`, cookie)
    expect(res.statusCode).toBe(200)
    // mutation: the bare class (`<dd>manual</dd>`) fails both
    expect(res.body).toContain(
      '<dt>Name from</dt><dd>your own system, through an inbound connection (an API push, a webhook source or a partner CRM) (manual)</dd>',
    )
    expect(res.body).not.toContain('<dt>Name from</dt><dd>manual</dd>')
  })
})
