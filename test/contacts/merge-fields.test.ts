import { describe, expect, it } from 'vitest'
import { mergeContact } from '@lsv/shared/domain/contacts/merge.ts'
import type { ContactRecord, ContactUpsertInput, WriterClass } from '@lsv/shared/model/records.ts'

/**
 * mergeContact field by field: each member group, handle list, custom field and the row-level
 * members (subject_type, resolved_by, name_source, seen/updated times) follows the precedence
 * ladder and the "null/undefined never erases" rule on its own. Written to kill the merge
 * mutants StrykerJS found surviving (npm run test:mutation -- merge; docs/reliability.md).
 */

const ACCOUNT = '7c0b5a2e-7d43-4d0e-9f43-000000000002'
const DAY = (d: number) => `2026-09-${String(d).padStart(2, '0')}T00:00:00.000Z`

function input(writer: WriterClass, day: number, patch: ContactUpsertInput['patch'], extra: Partial<ContactUpsertInput> = {}): ContactUpsertInput {
  return { source: 'crm', external_id: 'f1', writer, at: DAY(day), origin: `m:${writer}:${day}`, patch, ...extra }
}
const create = (i: ContactUpsertInput) => mergeContact(null, i, ACCOUNT)!
const apply = (r: ContactRecord, i: ContactUpsertInput) => mergeContact(r, i, ACCOUNT) ?? r

const cf = (value: unknown) => ({ value, source: 'inbound_mapping' as const, enriched_at: null })

describe('mergeContact: a new record', () => {
  it('starts empty: subject_type contact, no handles, traits or names, name_source null', () => {
    const r = create(input('manual', 1, { company: { name: 'Acme' } }))
    expect(r.subject_type).toBe('contact')
    expect(r.emails).toEqual([])
    expect(r.phones).toEqual([])
    expect(r.traits).toEqual([])
    expect(r.custom_fields).toEqual({})
    expect(r.identity).toEqual({})
    expect(r.name_source).toBeNull()
    expect(r.resolved_by).toBeNull()
    expect(r.updated_at).toBe(DAY(1))
  })
})

describe('mergeContact: every part of the patch lands, under its own version', () => {
  const full = input('manual', 2, {
    subject_type: 'person_profile',
    identity: { first_name: 'Ada' },
    company: { name: 'Acme' },
    location: { city: 'Berlin', state: 'BE' },
    business_email: ' Ada@Acme.EXAMPLE ',
    emails: [{ value: 'ada@home.example', kind: 'personal', verified: true }],
    phones: [{ value: '+15555550100', kind: 'mobile', dnc: false, dnc_known: true }],
    traits: [{ key: 'age', label: 'Age', value: '35-44', group: 'demographics' }],
    custom_fields: { plan: cf('gold') },
  })

  it('writes each member and records a version per field', () => {
    const r = create(full)
    expect(r.subject_type).toBe('person_profile')
    expect(r.location).toEqual({ city: 'Berlin', state: 'BE' })
    expect(r.business_email).toBe('ada@acme.example')
    expect(r.emails).toEqual(full.patch.emails)
    expect(r.phones).toEqual(full.patch.phones)
    expect(r.traits).toEqual(full.patch.traits)
    expect(r.custom_fields).toEqual({ plan: cf('gold') })
    expect(Object.keys(r.versions)).toEqual([
      'business_email',
      'company.name',
      'custom_fields.plan',
      'emails',
      'identity.first_name',
      // derived from the names (deriveFullName), under the newest name's version
      'identity.full_name',
      'location.city',
      'location.state',
      'phones',
      'subject_type',
      'traits',
    ])
    for (const v of Object.values(r.versions)) expect(v).toBe(`3|${DAY(2)}|m:manual:2`)
  })

  it('stores copies: changing the input afterwards does not change the record', () => {
    const i = structuredClone(full)
    const r = create(i)
    i.patch.emails![0]!.value = 'changed'
    i.patch.custom_fields!.plan!.value = 'changed'
    expect(r.emails[0]!.value).toBe('ada@home.example')
    expect(r.custom_fields.plan!.value).toBe('gold')
  })

  it('a lower writer changes none of them, a higher one replaces each', () => {
    const r = create(full)
    const lower = input('enrichment', 9, {
      subject_type: 'company_profile',
      location: { city: 'Paris' },
      business_email: 'x@low.example',
      emails: [],
      phones: [],
      traits: [],
      custom_fields: { plan: cf('bronze') },
    })
    const afterLower = apply(r, lower)
    expect(afterLower).toMatchObject({
      subject_type: 'person_profile',
      location: { city: 'Berlin', state: 'BE' },
      business_email: 'ada@acme.example',
      emails: full.patch.emails,
      phones: full.patch.phones,
      traits: full.patch.traits,
      custom_fields: { plan: cf('gold') },
    })
    const higher = input('form', 1, {
      subject_type: 'company_profile',
      location: { city: 'Paris' },
      business_email: 'X@High.example',
      emails: [],
      phones: [],
      traits: [],
      custom_fields: { plan: cf('platinum') },
    })
    expect(apply(afterLower, higher)).toMatchObject({
      subject_type: 'company_profile',
      location: { city: 'Paris', state: 'BE' },
      business_email: 'x@high.example',
      emails: [],
      phones: [],
      traits: [],
      custom_fields: { plan: cf('platinum') },
    })
  })

  it('a patch without a member leaves the stored member as it is', () => {
    const r = create(full)
    const after = apply(r, input('form', 5, { identity: { title: 'CTO' } }))
    expect(after).toMatchObject({
      subject_type: 'person_profile',
      emails: full.patch.emails,
      phones: full.patch.phones,
      traits: full.patch.traits,
      business_email: 'ada@acme.example',
    })
    expect(after.versions.subject_type).toBe(r.versions.subject_type)
  })
})

describe('mergeContact: null and undefined never erase', () => {
  it('in member groups and custom fields, whatever the writer', () => {
    const r = create(input('provider', 1, { identity: { first_name: 'Ada', title: 'CEO' }, custom_fields: { plan: cf('gold'), tier: cf('a') } }))
    const after = apply(
      r,
      input('form', 2, {
        identity: { first_name: undefined, title: null } as never,
        custom_fields: { plan: cf(null), tier: cf(undefined) },
      }),
    )
    expect(after.identity).toEqual({ first_name: 'Ada', full_name: 'Ada', title: 'CEO' })
    expect(after.custom_fields).toEqual({ plan: cf('gold'), tier: cf('a') })
    expect(after.versions['identity.first_name']).toBe(r.versions['identity.first_name'])
    expect(after.versions['custom_fields.plan']).toBe(r.versions['custom_fields.plan'])
    expect(after.name_source).toBe('provider')
  })

  it('a custom field with a value is written; one with null next to it is skipped', () => {
    const r = create(input('manual', 1, { custom_fields: { plan: cf('gold'), empty: cf(null), none: cf(undefined) } }))
    expect(r.custom_fields).toEqual({ plan: cf('gold') })
    expect(Object.keys(r.versions)).toEqual(['custom_fields.plan'])
  })
})

describe('mergeContact: ties and row-level members', () => {
  it('a write with the same version as the stored one (its redelivery) never replaces a value', () => {
    const r = create(
      input('manual', 3, { identity: { first_name: 'Ada' }, emails: [{ value: 'a@x.example', kind: null, verified: null }] }, { resolved_by: 'ip' }),
    )
    const same = input('manual', 3, { identity: { first_name: 'Bob' }, emails: [] }, { resolved_by: 'email' })
    expect(mergeContact(r, same, ACCOUNT)).toBeNull()
  })

  it('name_source follows any of the three name members, each on its own', () => {
    for (const field of ['first_name', 'last_name', 'full_name'] as const) {
      expect(create(input('form', 1, { identity: { [field]: 'X' } })).name_source, field).toBe('form')
      expect(create(input('enrichment', 1, { identity: { [field]: 'X' } })).name_source, field).toBe('enrichment')
    }
    // other identity members are not names
    expect(create(input('form', 1, { identity: { title: 'CTO', network_url: 'https://n.example/x' } })).name_source).toBeNull()
    // the highest writer holding any name wins
    const r = apply(create(input('provider', 1, { identity: { first_name: 'P' } })), input('manual', 2, { identity: { last_name: 'M' } }))
    expect(r.name_source).toBe('manual')
  })

  it('resolved_by: only a write that carries one sets it; the earliest such write keeps it', () => {
    const without = create(input('manual', 1, { identity: { title: 'CEO' } }))
    expect(without.resolved_by).toBeNull()
    expect(without.versions.resolved_by).toBeUndefined()
    const later = apply(without, input('provider', 5, {}, { resolved_by: 'ip' }))
    expect(later.resolved_by).toBe('ip')
    const earlier = apply(later, input('provider', 4, {}, { resolved_by: 'email' }))
    expect(earlier.resolved_by).toBe('email')
    const evenLater = apply(earlier, input('form', 9, {}, { resolved_by: 'form-x' }))
    expect(evenLater.resolved_by).toBe('email')
  })

  it('first_seen, last_seen and updated_at: earliest, latest and latest change', () => {
    const r = create(input('manual', 10, { identity: { title: 'A' } }))
    const earlier = apply(r, input('manual', 5, { company: { name: 'Acme' } }))
    expect(earlier).toMatchObject({ first_seen_at: DAY(5), last_seen_at: DAY(10), updated_at: DAY(10) })
    const later = apply(earlier, input('manual', 20, { location: { city: 'Rome' } }))
    expect(later).toMatchObject({ first_seen_at: DAY(5), last_seen_at: DAY(20), updated_at: DAY(20) })
    // an older write that still changes something never moves updated_at back
    const older = apply(later, input('form', 2, { identity: { seniority: 'vp' } }))
    expect(older).toMatchObject({ first_seen_at: DAY(2), last_seen_at: DAY(20), updated_at: DAY(20) })
  })

  it('the event time is normalized to one ISO width, so versions order by time', () => {
    const r = create(input('manual', 1, { identity: { title: 'A' } }, { at: '2026-09-01T00:00:00Z' }))
    expect(r.first_seen_at).toBe('2026-09-01T00:00:00.000Z')
    const later = apply(r, input('manual', 2, { identity: { title: 'B' } }, { at: '2026-09-02T00:00:00+00:00' }))
    expect(later.identity.title).toBe('B')
  })
})

describe('mergeContact: full_name is joined from the names the record holds (contract 2.1)', () => {
  it('a write of the last name alone joins it with the stored first name', () => {
    // the outside probe of 2026-11-30: full_name was "Murray", joined from the second write alone
    const r = create(input('provider', 1, { identity: { first_name: 'Grace', last_name: 'Hopper', full_name: 'Grace Hopper' } }))
    const after = apply(r, input('provider', 2, { identity: { last_name: 'Murray', full_name: 'Murray' } }))
    expect(after.identity).toEqual({ first_name: 'Grace', full_name: 'Grace Murray', last_name: 'Murray' })
    expect(after.versions['identity.full_name']).toBe(after.versions['identity.last_name'])
  })

  it('a name a higher writer holds stays in the join, and name_source is that writer', () => {
    const r = create(input('form', 1, { identity: { first_name: 'Ann' } }))
    const after = apply(r, input('provider', 2, { identity: { first_name: 'Anna', last_name: 'Lee' } }))
    expect(after.identity).toEqual({ first_name: 'Ann', full_name: 'Ann Lee', last_name: 'Lee' })
    expect(after.name_source).toBe('form')
  })

  it('converges: the same writes in either order give the same record', () => {
    const a = input('provider', 1, { identity: { first_name: 'Grace' } })
    const b = input('manual', 2, { identity: { last_name: 'Hopper' } })
    expect(apply(create(a), b)).toEqual(apply(create(b), a))
    expect(apply(create(a), b).identity.full_name).toBe('Grace Hopper')
  })

  it('a record with no name has no full_name', () => {
    expect(create(input('provider', 1, { identity: { title: 'CEO' } })).identity).toEqual({ title: 'CEO' })
  })
})
