import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contactIdFor } from '@lsv/shared/model/ids.ts'
import { hashOpaqueToken, newOpaqueToken } from '@lsv/shared/domain/links/opaque.ts'
import { mergeContact } from '@lsv/shared/domain/contacts/merge.ts'
import { handleVisitEvent } from '@lsv/shared/domain/visits/handle.ts'
import { createVisitMessageHandler } from '@lsv/shared/domain/visits/consume.ts'
import { RESOLUTION_SOURCE } from '@lsv/shared/domain/visits/resolve-person.ts'
import { deliveryIdFor } from '@lsv/shared/domain/webhooks/deliveries.ts'
import type { VisitEvent } from '@lsv/shared/contract/visit-event.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { randomSuffix } from '../helpers/embedded.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

type Deps = Awaited<ReturnType<typeof createTestDeps>>

describe('visit events', () => {
  let deps: Deps
  let tenant: StoredTenant
  const published = '2026-09-04T12:00:00.000Z'

  beforeAll(async () => {
    deps = await createTestDeps()
    // a receiver is not needed: deliveries are only created here
    tenant = await createTestTenant(deps, {
      ...ACCOUNT_ONLY,
      integration: { url: 'http://127.0.0.1:9/hook', tiers: { contact_handles: true, sensitive_traits: false } },
    })
  })
  afterAll(async () => {
    await tenant.cleanup()
    await deps.cleanup()
  })

  const event = (over: Partial<VisitEvent>): VisitEvent => ({
    id: `visit_${randomSuffix()}`,
    account_id: tenant.account.id,
    tier: 'person',
    visit: { captured_url: 'https://shop.example/pricing', seen_at: '2026-09-04T11:59:00.000Z' },
    ...over,
  })

  it('a resolution creates a new person with source resolution and a stable external id; is_repeat turns true', async () => {
    const networkUrl = `https://network.example/in/${randomSuffix()}`
    const resolution = {
      identity: { first_name: 'Ada', network_url: networkUrl },
      handles: { business_email: `Ada.${randomSuffix()}@Acme.example` },
      resolved_by: 'vendor-x',
    }
    const first = await handleVisitEvent(deps, event({ resolution }), published)
    expect(first.result).toBe('delivered')
    if (first.result !== 'delivered') return
    expect(first.isRepeat).toBe(false)
    expect(first.deliveryIds).toHaveLength(1)
    const stored = await deps.contacts.get(tenant.account.id, first.contactId)
    expect(stored!.source).toBe(RESOLUTION_SOURCE)
    expect(stored!.identity.network_url).toBe(networkUrl)
    expect(stored!.resolved_by).toBe('vendor-x')

    const second = await handleVisitEvent(deps, event({ resolution: { ...resolution, identity: { first_name: 'Ada' } } }), published)
    expect(second).toMatchObject({ result: 'delivered', contactId: first.contactId, isRepeat: true })
    const body = JSON.parse((await deps.deliveries.get(first.deliveryIds[0]!))!.body)
    expect(body.is_repeat).toBe(false)
    expect(body.subject.provenance.resolved_by).toBe('person')
    expect(JSON.stringify(body)).not.toContain('vendor-x')
  })

  it('matches an existing person by network_url, then by business email, and never overwrites network_url', async () => {
    const email = `grace.${randomSuffix()}@acme.example`
    const networkUrl = `https://network.example/in/${randomSuffix()}`
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
          patch: { identity: { first_name: 'Grace', network_url: networkUrl }, business_email: email },
        },
      ],
      mergeContact,
    )
    const id = contactIdFor(tenant.account.id, 'crm', ext)

    const byUrl = await handleVisitEvent(deps, event({ resolution: { identity: { network_url: networkUrl, title: 'CTO' }, resolved_by: 'v' } }), published)
    expect(byUrl).toMatchObject({ result: 'delivered', contactId: id })

    const byEmail = await handleVisitEvent(
      deps,
      event({
        resolution: { identity: { network_url: 'https://network.example/in/other' }, handles: { business_email: email.toUpperCase() }, resolved_by: 'v' },
      }),
      published,
    )
    expect(byEmail).toMatchObject({ result: 'delivered', contactId: id })
    const stored = await deps.contacts.get(tenant.account.id, id)
    expect(stored!.identity.network_url).toBe(networkUrl)
    expect(stored!.identity.first_name).toBe('Grace')
  })

  it('resolves by contact_id and by an lsv link token', async () => {
    const ext = `crm-${randomSuffix()}`
    await deps.contacts.upsertBatch(
      tenant.account.id,
      [{ source: 'crm', external_id: ext, writer: 'form', at: '2026-09-01T00:00:00.000Z', origin: `seed:${ext}`, patch: { identity: { first_name: 'Lin' } } }],
      mergeContact,
    )
    const id = contactIdFor(tenant.account.id, 'crm', ext)
    expect(await handleVisitEvent(deps, event({ contact_id: id }), published)).toMatchObject({ result: 'delivered', contactId: id })

    const token = newOpaqueToken()
    await deps.linkTokens.put({ hash: hashOpaqueToken(token), account_id: tenant.account.id, contact_id: id, created_at: published })
    expect(await handleVisitEvent(deps, event({ lsv: token }), published)).toMatchObject({ result: 'delivered', contactId: id, isRepeat: true })

    expect(await handleVisitEvent(deps, event({ contact_id: contactIdFor(tenant.account.id, 'crm', 'nobody') }), published)).toMatchObject({
      result: 'skipped',
    })
  })

  it('handles a redelivered event once', async () => {
    const e = event({ resolution: { identity: { network_url: `https://network.example/in/${randomSuffix()}` }, resolved_by: 'v' } })
    const first = await handleVisitEvent(deps, e, published)
    expect(first.result).toBe('delivered')
    expect(await handleVisitEvent(deps, e, published)).toEqual({ result: 'duplicate' })
  })

  it("accepts resolution members in the Contact's own shapes: a PhoneHandle with `callable` (recomputed, never trusted); full_name joined", async () => {
    const handler = createVisitMessageHandler(deps)
    const networkUrl = `https://network.example/in/${randomSuffix()}`
    const e = event({
      resolution: {
        identity: { first_name: 'Ada', last_name: 'Lovelace', full_name: 'Countess of Lovelace', network_url: networkUrl },
        handles: {
          emails: [{ value: 'ada@home.example', kind: 'personal', verified: true }],
          phones: [
            // claims callable although on the do-not-call list: must be withheld
            { value: '+15550000001', kind: 'mobile', dnc: true, dnc_known: true, callable: true },
            // claims not callable although known and not on the list: callable after all
            { value: '+15550000002', kind: 'work', dnc: false, dnc_known: true, callable: false },
            // dnc unknown: never callable, whatever it says
            { value: '+15550000003', kind: 'work', dnc: null, dnc_known: false, callable: true },
          ],
        },
        traits: [{ key: 'age_band', label: 'Age band', value: '30-39', group: 'demographics' }],
        resolved_by: 'vendor-y',
      },
    })
    // through the consumer, as the pipeline's message arrives: validation accepts it (acked, not dropped)
    const msg = { id: randomSuffix(), data: Buffer.from(JSON.stringify(e)), attributes: { v: '1' }, deliveryAttempt: 1, publishedAt: published }
    expect(await handler(msg)).toBe('ack')
    const contactId = contactIdFor(tenant.account.id, RESOLUTION_SOURCE, (await deps.contacts.findByNetworkUrl(tenant.account.id, networkUrl))!.external_id)
    const stored = await deps.contacts.get(tenant.account.id, contactId)
    expect(stored!.identity).toMatchObject({ first_name: 'Ada', last_name: 'Lovelace', full_name: 'Ada Lovelace' })
    const delivery = await deps.deliveries.get(deliveryIdFor(e.id, tenant.integration.id))
    expect(delivery).not.toBeNull()
    const subject = JSON.parse(delivery!.body).subject
    expect(subject.identity.full_name).toBe('Ada Lovelace')
    expect(subject.handles.phones).toEqual([{ value: '+15550000002', kind: 'work', dnc: false, dnc_known: true, callable: true }])
    expect(subject.missing['handles.phones[0]']).toBe('withheld_compliance')
    expect(subject.missing['handles.phones[2]']).toBe('withheld_compliance')
    expect(subject.handles.emails).toEqual([{ value: 'ada@home.example', kind: 'personal', verified: true }])
  })

  it('full_name is joined from whichever of first and last name the resolution gives, and a sent full_name alone is not trusted', async () => {
    const only = async (identity: Record<string, string>) => {
      const networkUrl = `https://network.example/in/${randomSuffix()}`
      const r = await handleVisitEvent(deps, event({ resolution: { identity: { ...identity, network_url: networkUrl }, resolved_by: 'v' } }), published)
      if (r.result !== 'delivered') throw new Error(r.result)
      return (await deps.contacts.get(tenant.account.id, r.contactId))!.identity.full_name
    }
    expect(await only({ first_name: 'Grace' })).toBe('Grace')
    expect(await only({ last_name: 'Hopper' })).toBe('Hopper')
    expect(await only({ full_name: 'Someone Else' })).toBeUndefined()
  })

  it('acks and drops an invalid or unknown-version message; validates on consume', async () => {
    const handler = createVisitMessageHandler(deps)
    const msg = (data: unknown, attributes: Record<string, string> = { v: '1' }) => ({
      id: randomSuffix(),
      data: Buffer.from(JSON.stringify(data)),
      attributes,
      deliveryAttempt: 1,
      publishedAt: published,
    })
    expect(await handler(msg({ id: 'x', account_id: tenant.account.id, tier: 'person' }))).toBe('ack') // no person named
    expect(await handler(msg({ id: 'x', account_id: tenant.account.id, tier: 'vip', contact_id: 'c' }))).toBe('ack')
    expect(await handler(msg(event({ contact_id: 'c' }), { v: '99' }))).toBe('ack')
  })
})
