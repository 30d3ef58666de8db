import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { contactIdFor } from '@lsv/shared/model/ids.ts'
import { mergeContact } from '@lsv/shared/domain/contacts/merge.ts'
import { publishVisitEvent } from '@lsv/shared/domain/visits/publish.ts'
import type { Background } from '@lsv/shared/platform/serve.ts'
import { background as startDispatcherBackground } from '../../services/webhook-dispatcher/src/background.ts'
import { backgroundFor } from '@lsv/shared/platform/background.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { randomSuffix } from '../helpers/embedded.ts'
import { startReceiver } from './harness.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { contractValidator } from './schema.ts'
import { waitFor } from '../conformance/suites/wait.ts'

type Deps = Awaited<ReturnType<typeof createTestDeps>>

describe('end to end: visit event -> signed visitor.identified at a local receiver', () => {
  let deps: Deps
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let tenant: StoredTenant
  let background: Background[] = []

  beforeAll(async () => {
    deps = await createTestDeps({ config: { allowLoopbackWebhooks: true } })
    receiver = await startReceiver()
    tenant = await createTestTenant(deps, {
      ...ACCOUNT_ONLY,
      customFields: [{ key: 'plan', label: 'Plan', type: 'select' }],
      integration: { url: receiver.url, tiers: { contact_handles: true, sensitive_traits: false } },
    })
    background = await startDispatcherBackground(deps, backgroundFor('webhook-dispatcher', deps.config))
  })
  afterAll(async () => {
    for (const b of background) await b.close()
    await receiver.close()
    await tenant.cleanup()
    await deps.cleanup()
  })

  it('delivers a signed, schema-valid body for a visit carrying contact_id', async () => {
    const ext = `crm-${randomSuffix()}`
    await deps.contacts.upsertBatch(
      tenant.account.id,
      [
        {
          source: 'crm',
          external_id: ext,
          writer: 'form',
          at: '2026-09-01T00:00:00.000Z',
          origin: `seed:${ext}`,
          patch: {
            identity: { first_name: 'Jane', last_name: 'Doe' },
            business_email: 'jane@acme.example',
            phones: [
              { value: '+15555550100', kind: 'mobile', dnc: false, dnc_known: true },
              { value: '+15555550199', kind: 'mobile', dnc: true, dnc_known: true },
            ],
            custom_fields: { plan: { value: 'gold', source: 'inbound_mapping', enriched_at: null } },
          },
        },
      ],
      mergeContact,
    )
    const contactId = contactIdFor(tenant.account.id, 'crm', ext)
    const eventId = `visit_${randomSuffix()}`
    await publishVisitEvent(deps, {
      id: eventId,
      account_id: tenant.account.id,
      tier: 'person',
      contact_id: contactId,
      visit: { captured_url: 'https://shop.example/pricing', referrer: null, seen_at: new Date().toISOString() },
      classification: 'high_intent',
    })
    await waitFor(() => receiver.requests.length >= 1, 'the delivery', 15_000)
    const [req] = receiver.requests
    expect(req!.headers['content-type']).toBe('application/json')
    expect(req!.headers['x-service-idempotency-key']).toBe(eventId)
    // the standardwebhooks package verifies the delivery with the integration's secret
    const body = new Webhook(tenant.signingSecret).verify(req!.body, {
      'webhook-id': String(req!.headers['webhook-id']),
      'webhook-timestamp': String(req!.headers['webhook-timestamp']),
      'webhook-signature': String(req!.headers['x-service-signature']),
    }) as Record<string, any>
    ;(await contractValidator()).assertWebhookEvent(body)
    expect(body).toMatchObject({
      event: 'visitor.identified',
      contract_version: '2026-09-04',
      id: eventId,
      tier: 'person',
      is_repeat: false,
      classification: 'high_intent',
    })
    expect(body.served_from).toBeUndefined()
    expect(body.subject.id).toBe(contactId)
    expect(body.subject.handles.phones).toEqual([{ value: '+15555550100', kind: 'mobile', dnc: false, dnc_known: true, callable: true }])
    expect(body.subject.missing['handles.phones[1]']).toBe('withheld_compliance')
    expect(body.subject.custom_fields).toEqual([{ key: 'plan', label: 'Plan', type: 'select', value: 'gold', source: 'inbound_mapping', enriched_at: null }])
    expect(body.field_policy.enabled_tiers).toEqual([1, 2])
    expect(body.field_policy.withheld_tiers).toEqual(['sensitive_traits'])
    // the delivery log records the acknowledged attempt
    let log = await deps.deliveries.list(tenant.integration.id, { limit: 10 })
    for (let i = 0; i < 100 && log[0]?.status !== 'succeeded'; i++) {
      await new Promise((r) => setTimeout(r, 50))
      log = await deps.deliveries.list(tenant.integration.id, { limit: 10 })
    }
    expect(log[0]).toMatchObject({ event_id: eventId, status: 'succeeded' })
    expect(log[0]!.attempts[0]).toMatchObject({ attempt: 1, status_code: 200 })
  })
})
