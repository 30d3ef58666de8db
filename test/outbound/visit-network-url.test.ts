import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contactIdFor } from '@lsv/shared/model/ids.ts'
import { mergeContact } from '@lsv/shared/domain/contacts/merge.ts'
import { handleVisitEvent } from '@lsv/shared/domain/visits/handle.ts'
import type { VisitEvent } from '@lsv/shared/contract/visit-event.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { randomSuffix } from '../helpers/embedded.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

/**
 * `identity.network_url` is never overwritten by a provider upsert (half of the row's unique
 * key). The precedence ladder alone protects a value written by a higher writer (form, manual,
 * enrichment); these contacts are FIRST written by the provider class itself, where only the
 * explicit guard stops a later provider write of the same rank and a later event time.
 *
 * Mutation this catches (it survived before: the only end-to-end test seeded a `form` writer):
 * dropping the guard of the visit path, `if (existing?.identity.network_url) delete identity.network_url`
 * (patchFromResolution, shared/src/domain/visits/resolution-patch.ts, called by resolve-person.ts).
 */

describe('visit events never change a stored network_url, also for a provider-written contact', () => {
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let tenant: StoredTenant
  const published = '2026-09-04T12:00:00.000Z'

  beforeAll(async () => {
    deps = await createTestDeps()
    tenant = await createTestTenant(deps, {
      ...ACCOUNT_ONLY,
      integration: { url: 'http://127.0.0.1:9/hook', tiers: { contact_handles: true, sensitive_traits: false } },
    })
  })
  afterAll(async () => {
    await tenant.cleanup()
    await deps.cleanup()
  })

  const event = (seenAt: string, resolution: VisitEvent['resolution']): VisitEvent => ({
    id: `visit_${randomSuffix()}`,
    account_id: tenant.account.id,
    tier: 'person',
    visit: { captured_url: 'https://shop.example/pricing', seen_at: seenAt },
    resolution,
  })

  it('a person created by a visit keeps its network_url when a later visit matches it by email with another one', async () => {
    const email = `ada.${randomSuffix()}@acme.example`
    const original = `https://network.example/in/${randomSuffix()}`
    const first = await handleVisitEvent(
      deps,
      event('2026-09-04T10:00:00.000Z', {
        identity: { first_name: 'Ada', network_url: original },
        handles: { business_email: email },
        resolved_by: 'v',
      }),
      published,
    )
    expect(first.result).toBe('delivered')
    if (first.result !== 'delivered') return
    const created = (await deps.contacts.get(tenant.account.id, first.contactId))!
    expect(created.name_source).toBe('provider')
    expect(created.identity.network_url).toBe(original)

    // later, same rank (provider): without the guard the later event time would win
    const other = `https://network.example/in/${randomSuffix()}`
    const second = await handleVisitEvent(
      deps,
      event('2026-09-04T11:00:00.000Z', {
        identity: { first_name: 'Ada', title: 'CTO', network_url: other },
        handles: { business_email: email.toUpperCase() },
        resolved_by: 'v',
      }),
      published,
    )
    expect(second).toMatchObject({ result: 'delivered', contactId: first.contactId })
    const stored = (await deps.contacts.get(tenant.account.id, first.contactId))!
    expect(stored.identity.network_url).toBe(original)
    expect(stored.identity.title).toBe('CTO') // the rest of that provider write did land
    // and what the receiver got for the second visit carries the stored value, never the new one
    if (second.result !== 'delivered') return
    const delivered = (await deps.deliveries.get(second.deliveryIds[0]!))!.body
    expect(delivered).toContain(JSON.stringify(original).slice(1, -1))
    expect(delivered).not.toContain(JSON.stringify(other).slice(1, -1))
  })

  it('a contact first written by the provider writer (not form) keeps its network_url against a later visit', async () => {
    const email = `grace.${randomSuffix()}@acme.example`
    const original = `https://network.example/in/${randomSuffix()}`
    const ext = `crm-${randomSuffix()}`
    await deps.contacts.upsertBatch(
      tenant.account.id,
      [
        {
          source: 'crm',
          external_id: ext,
          writer: 'provider',
          at: '2026-09-01T00:00:00.000Z',
          origin: `seed:${ext}`,
          patch: { identity: { first_name: 'Grace', network_url: original }, business_email: email },
        },
      ],
      mergeContact,
    )
    const id = contactIdFor(tenant.account.id, 'crm', ext)
    expect((await deps.contacts.get(tenant.account.id, id))!.name_source).toBe('provider')

    const other = `https://network.example/in/${randomSuffix()}`
    const result = await handleVisitEvent(
      deps,
      event('2026-09-04T11:59:00.000Z', {
        identity: { last_name: 'Hopper', network_url: other },
        handles: { business_email: email },
        resolved_by: 'v',
      }),
      published,
    )
    expect(result).toMatchObject({ result: 'delivered', contactId: id })
    const stored = (await deps.contacts.get(tenant.account.id, id))!
    expect(stored.identity.network_url).toBe(original)
    expect(stored.identity.last_name).toBe('Hopper')
    // the stored value still finds the person; the refused one names nobody
    expect((await deps.contacts.findByNetworkUrl(tenant.account.id, original))?.id).toBe(id)
    expect(await deps.contacts.findByNetworkUrl(tenant.account.id, other)).toBeNull()
  })

  it('a person known by email only gets the network_url of the first visit that has one, and keeps it', async () => {
    const email = `lin.${randomSuffix()}@acme.example`
    const first = await handleVisitEvent(deps, event('2026-09-04T09:00:00.000Z', { handles: { business_email: email }, resolved_by: 'v' }), published)
    if (first.result !== 'delivered') throw new Error(`visit not delivered: ${first.result}`)
    const set = `https://network.example/in/${randomSuffix()}`
    await handleVisitEvent(
      deps,
      event('2026-09-04T10:00:00.000Z', { identity: { network_url: set }, handles: { business_email: email }, resolved_by: 'v' }),
      published,
    )
    expect((await deps.contacts.get(tenant.account.id, first.contactId))!.identity.network_url).toBe(set)
    await handleVisitEvent(
      deps,
      event('2026-09-04T11:00:00.000Z', {
        identity: { network_url: `https://network.example/in/${randomSuffix()}` },
        handles: { business_email: email },
        resolved_by: 'v',
      }),
      published,
    )
    expect((await deps.contacts.get(tenant.account.id, first.contactId))!.identity.network_url).toBe(set)
  })
})
