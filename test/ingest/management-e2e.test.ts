import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { handleBatchMessage } from '../../services/upsert-worker/src/handle-batch.ts'
import { createTestTenant, type ManagedTenant } from '../helpers/tenant.ts'
import { createHarness, body, type Harness } from './support/harness.ts'

/**
 * A tenant set up the way the portal and the CLI do it (the management API, operator token),
 * then a push per operation, the worker, and the rows found by (source, external_id).
 */
describe('ingestion end to end, provisioned through the management API', () => {
  let h: Harness
  let t: ManagedTenant | undefined

  beforeAll(async () => {
    h = await createHarness()
  })
  afterAll(async () => {
    await t?.cleanup()
    await h?.close()
  })

  it('api key, webhook source with field mappings and a custom field, partner CRM location: each push lands as a contact', async () => {
    // every call answered with its exact status (the harness fails otherwise); no authorized domain
    t = await createTestTenant(
      { managementApi: h.portal, deps: h.deps },
      {
        authorizedDomains: [],
        customFields: [{ key: 'plan', label: 'Plan', type: 'select' }],
        api: { source: 'crm', key: {} },
        webhook: {
          source: 'forms',
          mappings: [
            { from: 'Email Address', to: 'email' },
            { from: 'Submission ID', to: 'external_id' },
            { from: 'Plan', to: 'custom_fields.plan' },
          ],
        },
        partner: { locationId: 'loc-1' },
      },
    )
    const host = t.host

    const pushes = [
      {
        url: '/v1/contacts',
        headers: { authorization: `Bearer ${t.key}` },
        payload: body([{ external_id: 'c-1', email: 'C1@Example.com', first_name: 'Cy' }]),
      },
      {
        url: `/v1/contacts/${t.webhookConnectionId}`,
        headers: { 'x-webhook-token': t.sourceToken },
        payload: body([{ submission_id: 's-1', email_address: 'S1@example.com', plan: 'gold', email: 'ignored@example.com' }]),
      },
      {
        url: '/v1/contacts/partnercrm',
        headers: { 'x-webhook-token': t.locationToken },
        payload: JSON.stringify({ contactId: 'p-1', locationId: 'loc-1', firstName: 'Pat' }),
      },
    ]
    for (const p of pushes) {
      const before = h.q.batches().length
      const res = await h.edge.inject({ method: 'POST', url: p.url, headers: { host, 'content-type': 'application/json', ...p.headers }, payload: p.payload })
      expect(res.statusCode, `${p.url}: ${res.body}`).toBe(202)
      expect(res.json()).toEqual({ ok: true, accepted: 1, queued: true })
      expect(await handleBatchMessage(h.deps, h.q.batches()[before]!)).toBe('ack')
    }
    expect(await h.deps.contacts.getByAnchor(t.accountId, 'crm', 'c-1')).toMatchObject({
      business_email: 'c1@example.com',
      identity: { first_name: 'Cy' },
      name_source: 'manual',
    })
    expect(await h.deps.contacts.getByAnchor(t.accountId, 'forms', 's-1')).toMatchObject({
      business_email: 's1@example.com',
      custom_fields: { plan: { value: 'gold', source: 'inbound_mapping', enriched_at: null } },
    })
    expect(await h.deps.contacts.getByAnchor(t.accountId, 'partnercrm', 'p-1')).toMatchObject({ identity: { first_name: 'Pat' } })
  })
})
