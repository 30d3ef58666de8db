import { describe, expect, it } from 'vitest'
import { InvalidVisitEvent, parseVisitMessage, validateVisitEvent } from '@lsv/shared/domain/visits/parse.ts'
import { buildWebhookEventV2 } from '@lsv/shared/domain/webhooks/build-event.ts'
import { assembleContact } from '@lsv/shared/domain/contacts/assemble.ts'
import { patchFromResolution, resolutionExternalId } from '@lsv/shared/domain/visits/resolution-patch.ts'
import { mergeContact } from '@lsv/shared/domain/contacts/merge.ts'
import { baseRecord } from './records.ts'
import { VisitResolution } from '@lsv/shared/contract/visit-event.ts'
import { ContactCompany, ContactIdentity, ContactLocation, EmailHandle, PhoneHandle, Trait } from '@lsv/shared/contract/contact.ts'

const base = { id: 'visit_1', account_id: 'acct', tier: 'person' as const }

describe('visit event message', () => {
  it("names a contact by its id in any case or URN form; other ways' values are kept as sent", () => {
    // every visit crosses validateVisitEvent (Pub/Sub and the management API); contact ids are stored lower case
    const id = '8864b6e5-ada8-8cb3-8568-b220ec7ec587'
    expect(validateVisitEvent({ ...base, contact_id: id.toUpperCase() }).contact_id).toBe(id)
    expect(validateVisitEvent({ ...base, contact_id: `urn:uuid:${id}` }).contact_id).toBe(id)
    expect(parseVisitMessage(Buffer.from(JSON.stringify({ ...base, contact_id: id.toUpperCase() })), {}).contact_id).toBe(id)
    expect(validateVisitEvent({ ...base, contact_id: 'Not-A-Uuid' }).contact_id).toBe('Not-A-Uuid')
    expect(validateVisitEvent({ ...base, lsv: 'a.AbC' }).lsv).toBe('a.AbC')
  })

  it('accepts exactly one of contact_id, lsv, resolution', () => {
    expect(validateVisitEvent({ ...base, contact_id: 'c' }).contact_id).toBe('c')
    expect(validateVisitEvent({ ...base, lsv: 't' }).lsv).toBe('t')
    expect(validateVisitEvent({ ...base, resolution: { resolved_by: 'v' } }).resolution).toEqual({ resolved_by: 'v' })
    expect(() => validateVisitEvent(base)).toThrow(InvalidVisitEvent)
    expect(() => validateVisitEvent({ ...base, contact_id: 'c', lsv: 't' })).toThrow(InvalidVisitEvent)
  })

  it('refuses unknown members, bad tiers and bad dates', () => {
    expect(() => validateVisitEvent({ ...base, contact_id: 'c', extra: 1 })).toThrow(InvalidVisitEvent)
    expect(() => validateVisitEvent({ ...base, tier: 'vip', contact_id: 'c' })).toThrow(InvalidVisitEvent)
    expect(() => validateVisitEvent({ ...base, contact_id: 'c', visit: { seen_at: 'yesterday' } })).toThrow(InvalidVisitEvent)
    expect(() => validateVisitEvent({ ...base, resolution: { identity: {} } })).toThrow(InvalidVisitEvent) // resolved_by required
  })

  it('is versioned: attribute v must be 1; the body must be JSON', () => {
    const data = Buffer.from(JSON.stringify({ ...base, contact_id: 'c' }))
    expect(parseVisitMessage(data, { v: '1' }).id).toBe('visit_1')
    expect(() => parseVisitMessage(data, { v: '2' })).toThrow(InvalidVisitEvent)
    expect(() => parseVisitMessage(Buffer.from('{nope'), { v: '1' })).toThrow(InvalidVisitEvent)
  })
})

describe("resolution members have the Contact's own shapes (management-api.md)", () => {
  const props = (schema: unknown) => Object.keys((schema as { properties: Record<string, unknown> }).properties).sort()
  const resolutionProps = VisitResolution.properties

  it("declares every member of the Contact's identity, company, location, EmailHandle, PhoneHandle and Trait", () => {
    expect(props(resolutionProps.identity)).toEqual(props(ContactIdentity))
    expect(props(resolutionProps.company)).toEqual(props(ContactCompany))
    expect(props(resolutionProps.location)).toEqual(props(ContactLocation))
    const handles = resolutionProps.handles as unknown as { properties: { emails: { items: unknown }; phones: { items: unknown } } }
    expect(props(handles.properties.emails.items)).toEqual(props(EmailHandle))
    expect(props(handles.properties.phones.items)).toEqual(props(PhoneHandle))
    expect(props((resolutionProps.traits as unknown as { items: unknown }).items)).toEqual(props(Trait))
  })

  it('accepts whole handles as a Contact carries them, `callable` included', () => {
    const resolution = {
      identity: { first_name: 'A', last_name: 'B', full_name: 'A B', title: 'CTO', seniority: 'c-level', network_url: 'https://n.example/in/a' },
      handles: {
        business_email: 'a@b.example',
        emails: [{ value: 'a@home.example', kind: 'personal', verified: true }],
        phones: [{ value: '+15550000001', kind: 'mobile', dnc: false, dnc_known: true, callable: true }],
      },
      traits: [{ key: 'k', label: 'L', value: 'v', group: 'household' }],
      resolved_by: 'v',
    }
    expect(validateVisitEvent({ ...base, resolution }).resolution).toEqual(resolution)
  })

  it('recomputes derived members: full_name from first and last name (by the merge); callable is not stored', () => {
    const patch = patchFromResolution(
      {
        identity: { first_name: ' Ada ', last_name: 'Lovelace', full_name: 'Lord Byron' },
        handles: { phones: [{ value: '+1', dnc: true, dnc_known: true, callable: true }] },
        resolved_by: 'v',
      },
      null,
    )
    // the provider's full_name is dropped; the merge joins the names the contact holds
    expect(patch.identity).toEqual({ first_name: ' Ada ', last_name: 'Lovelace' })
    const merged = mergeContact(null, { source: 'visits', external_id: 'x', writer: 'provider', at: '2026-09-04T12:00:00.000Z', origin: 'o', patch }, 'acct')
    expect(merged!.identity.full_name).toBe('Ada Lovelace')
    expect(patch.phones).toEqual([{ value: '+1', kind: null, dnc: true, dnc_known: true }])
    expect(patchFromResolution({ identity: { full_name: 'Only Full' }, resolved_by: 'v' }, null).identity).toEqual({})
  })
})

describe('resolution -> provider patch', () => {
  it('never overwrites an existing network_url and lower-cases the business email', () => {
    const resolution = {
      identity: { first_name: 'A', network_url: 'https://n.example/in/new' },
      handles: { business_email: 'A@Acme.Example' },
      resolved_by: 'v',
    }
    const existing = baseRecord({ identity: { network_url: 'https://n.example/in/old' } })
    const patch = patchFromResolution(resolution, existing)
    expect(patch.identity).toEqual({ first_name: 'A' })
    expect(patch.business_email).toBe('a@acme.example')
    expect(patchFromResolution(resolution, null).identity!.network_url).toBe('https://n.example/in/new')
  })

  it('derives a stable external id from the network URL, else the email', () => {
    const a = resolutionExternalId({ identity: { network_url: 'https://www.n.example/in/x/' }, resolved_by: 'v' }, 'e1')
    const b = resolutionExternalId({ identity: { network_url: 'http://n.example/in/x' }, resolved_by: 'v' }, 'e2')
    expect(a).toBe(b)
    expect(resolutionExternalId({ handles: { business_email: 'X@y.example' }, resolved_by: 'v' }, 'e1')).toBe(
      resolutionExternalId({ handles: { business_email: 'x@y.example' }, resolved_by: 'w' }, 'e9'),
    )
  })
})

describe('WebhookEventV2 envelope', () => {
  const { contact, fieldPolicy } = assembleContact(baseRecord(), {
    permittedTiers: [1],
    contactHandles: false,
    sensitiveTraits: false,
    definitions: [],
    mappedCustomFieldKeys: null,
    portalBaseUrl: 'https://p.example',
  })

  it('omits classification, served_from and an empty visit', () => {
    const body = buildWebhookEventV2({
      event: { ...base, contact_id: 'c', classification: '', served_from: '', visit: {} },
      subject: contact,
      fieldPolicy,
      isRepeat: false,
      emittedAt: '2026-09-04T12:00:00.000Z',
    })
    expect(Object.keys(body).sort()).toEqual(['contract_version', 'emitted_at', 'event', 'field_policy', 'id', 'is_repeat', 'subject', 'tier'])
    expect(body.subject).toBe(contact)
  })

  it('carries the event id, its emitted_at and the visit members given', () => {
    const body = buildWebhookEventV2({
      event: {
        ...base,
        contact_id: 'c',
        emitted_at: '2026-09-04T11:00:00.000Z',
        served_from: 'cache',
        visit: { captured_url: 'https://s.example/', referrer: null },
      },
      subject: contact,
      fieldPolicy,
      isRepeat: true,
      emittedAt: '2026-09-04T12:00:00.000Z',
    })
    expect(body).toMatchObject({
      event: 'visitor.identified',
      contract_version: '2026-09-04',
      id: 'visit_1',
      emitted_at: '2026-09-04T11:00:00.000Z',
      is_repeat: true,
      served_from: 'cache',
      visit: { captured_url: 'https://s.example/', referrer: null },
    })
  })
})
