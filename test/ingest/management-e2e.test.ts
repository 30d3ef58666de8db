import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { handleBatchMessage } from '../../services/upsert-worker/src/handle-batch.ts'
import { randomSuffix } from '../helpers/embedded.ts'
import { createHarness, body, type Harness } from './support/harness.ts'

/**
 * A tenant set up the way the portal and the CLI do it (the management API, operator token),
 * then a push per operation, the worker, and the rows found by (source, external_id).
 */
describe('ingestion end to end, provisioned through the management API', () => {
  let h: Harness
  const op = { authorization: 'Bearer test-operator-token', 'content-type': 'application/json' }
  const admin = async (method: string, url: string, payload?: unknown) => {
    const res = await h.portal.inject({ method: method as 'POST', url, headers: op, ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }) })
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300)
    return res.body ? res.json() : null
  }
  let accountId = ''

  beforeAll(async () => {
    h = await createHarness()
  })
  afterAll(async () => {
    if (accountId) {
      await h.deps.contacts.deleteAccountData(accountId)
      await h.deps.tenants.deleteAccountData(accountId)
    }
    await h?.close()
  })

  it('api key, webhook source with field mappings and a custom field, partner CRM location: each push lands as a contact', async () => {
    const publicId = `mgmt-${randomSuffix(4)}`
    const account = await admin('POST', '/api/v1/admin/accounts', { public_id: publicId })
    accountId = account.id
    const base = `/api/v1/admin/accounts/${account.id}`
    await admin('POST', `${base}/custom-fields`, { key: 'plan', label: 'Plan', type: 'select' })
    const api = await admin('POST', `${base}/connections`, { type: 'api', source: 'crm' })
    const key = await admin('POST', `${base}/connections/${api.id}/keys`, {})
    const hook = await admin('POST', `${base}/connections`, {
      type: 'webhook', source: 'forms',
      field_mappings: [{ from: 'Email Address', to: 'email' }, { from: 'Submission ID', to: 'external_id' }, { from: 'Plan', to: 'custom_fields.plan' }],
    })
    const partner = await admin('POST', `${base}/connections`, { type: 'partnercrm' })
    const location = await admin('POST', `${base}/connections/${partner.id}/locations`, { location_id: 'loc-1' })
    const host = `${publicId}.${h.deps.config.edgeDomain}`

    const pushes = [
      { url: '/v1/contacts', headers: { authorization: `Bearer ${key.key}` }, payload: body([{ external_id: 'c-1', email: 'C1@Example.com', first_name: 'Cy' }]) },
      { url: `/v1/contacts/${hook.id}`, headers: { 'x-webhook-token': hook.token }, payload: body([{ submission_id: 's-1', email_address: 'S1@example.com', plan: 'gold', email: 'ignored@example.com' }]) },
      { url: '/v1/contacts/partnercrm', headers: { 'x-webhook-token': location.token }, payload: JSON.stringify({ contactId: 'p-1', locationId: 'loc-1', firstName: 'Pat' }) },
    ]
    for (const p of pushes) {
      const before = h.q.batches().length
      const res = await h.edge.inject({ method: 'POST', url: p.url, headers: { host, 'content-type': 'application/json', ...p.headers }, payload: p.payload })
      expect(res.statusCode, `${p.url}: ${res.body}`).toBe(202)
      expect(res.json()).toEqual({ ok: true, accepted: 1, queued: true })
      expect(await handleBatchMessage(h.deps, h.q.batches()[before]!)).toBe('ack')
    }
    expect(await h.deps.contacts.getByAnchor(account.id, 'crm', 'c-1')).toMatchObject({ business_email: 'c1@example.com', identity: { first_name: 'Cy' }, name_source: 'manual' })
    expect(await h.deps.contacts.getByAnchor(account.id, 'forms', 's-1')).toMatchObject({
      business_email: 's1@example.com', custom_fields: { plan: { value: 'gold', source: 'inbound_mapping', enriched_at: null } },
    })
    expect(await h.deps.contacts.getByAnchor(account.id, 'partnercrm', 'p-1')).toMatchObject({ identity: { first_name: 'Pat' } })
  })
})
