import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { assembleContact, type ContactCaller } from '@lsv/shared/domain/contacts/assemble.ts'
import type { EmittedContact } from '@lsv/shared/contract/contact.ts'
import { keySetOf } from '@lsv/shared/domain/contacts/key-set.ts'
import type { ContactRecord, CustomFieldDefinition } from '@lsv/shared/model/records.ts'
import { baseRecord, definitionArb, recordArb, tiersArb } from './records.ts'
import { contractValidator } from './schema.ts'

const defs = (...keys: string[]): CustomFieldDefinition[] =>
  keys.map((key) => ({ account_id: 'acct-test', key, label: key.toUpperCase(), type: 'text', created_at: '2026-09-01T00:00:00.000Z' }))

function caller(overrides: Partial<ContactCaller> = {}): ContactCaller {
  return {
    permittedTiers: [1, 2, 3],
    contactHandles: false,
    sensitiveTraits: false,
    definitions: [],
    mappedCustomFieldKeys: null,
    portalBaseUrl: 'https://portal.example.com',
    ...overrides,
  }
}

/**
 * K as docs/contact-object.md states it, written out here rather than taken from the code under
 * test (key-set.ts): a wrong key list there cannot make its own test agree with it.
 */
const ALWAYS_IN_K = [
  'identity.first_name',
  'identity.last_name',
  'identity.full_name',
  'identity.title',
  'identity.seniority',
  'identity.network_url',
  'company.name',
  'company.domain',
  'company.website',
  'company.industry',
  'company.employee_count',
  'company.est_revenue',
  'company.network_url',
  'location.city',
  'location.state',
  'location.postal_code',
  'handles.business_email',
]
/** the five closed reasons of `missing` (contract 2.2) */
const REASONS = ['no_source', 'not_enriched', 'unmapped', 'withheld_compliance', 'withheld_tier']

function expectedK(record: ContactRecord, handlesReleased: boolean, definitions: CustomFieldDefinition[]): string[] {
  const k = [...ALWAYS_IN_K]
  // tier 2: one key per stored handle when released; the aggregate key when withheld or none stored
  k.push(...(handlesReleased && record.emails.length > 0 ? record.emails.map((_e, i) => `handles.emails[${i}]`) : ['handles.emails']))
  k.push(...(handlesReleased && record.phones.length > 0 ? record.phones.map((_p, i) => `handles.phones[${i}]`) : ['handles.phones']))
  // tier 3: one key per stored trait, by its key when that key is set and unique, else by position
  if (record.traits.length === 0) k.push('traits')
  for (const [i, t] of record.traits.entries()) {
    const unique = t.key !== null && record.traits.filter((o) => o.key === t.key).length === 1
    k.push(unique ? `traits.${t.key}` : `traits[${i}]`)
  }
  // tier 1: one key per custom field definition of the account
  for (const d of definitions) k.push(`custom_fields.${d.key}`)
  return k
}

/** Keys of K carried as values, read back from the object alone. */
function valueKeys(contact: EmittedContact, k: string[]): string[] {
  const out: string[] = []
  for (const g of ['identity', 'company', 'location'] as const) for (const m of Object.keys(contact[g])) out.push(`${g}.${m}`)
  if (contact.handles.business_email !== undefined) out.push('handles.business_email')
  for (const c of contact.custom_fields) out.push(`custom_fields.${c.key}`)
  // positional keys: the emitted elements are the positional keys of K not in `missing`
  const positional = (re: RegExp, emitted: number) => {
    const candidates = k.filter((key) => re.test(key) && !(key in contact.missing))
    expect(candidates).toHaveLength(emitted)
    out.push(...candidates)
  }
  positional(/^handles\.emails\[\d+\]$/, contact.handles.emails.length)
  positional(/^handles\.phones\[\d+\]$/, contact.handles.phones.length)
  positional(/^traits[.[]/, contact.traits.length)
  return out
}

describe('Contact assembly: tiers', () => {
  const record = baseRecord({
    identity: { first_name: 'Jane', last_name: null, title: '' },
    business_email: 'jane@acme.example',
    emails: [{ value: 'jane@home.example', kind: 'personal', verified: true }],
    phones: [{ value: '+15555550100', kind: 'mobile', dnc: false, dnc_known: true }],
    traits: [{ key: 'age', label: 'Age band', value: '35-44', group: 'demographics' }],
    custom_fields: { plan: { value: 'gold', source: 'inbound_mapping', enriched_at: null } },
    resolved_by: 'vendor-x',
  })

  it('every top-level key is present; empty nested members are omitted; links are absolute', () => {
    const { contact } = assembleContact(record, caller({ definitions: defs('plan') }))
    expect(Object.keys(contact).sort()).toEqual([
      'company',
      'contract_version',
      'custom_fields',
      'handles',
      'id',
      'identity',
      'links',
      'location',
      'missing',
      'object',
      'provenance',
      'subject_type',
      'traits',
    ])
    expect(contact.object).toBe('contact')
    expect(contact.contract_version).toBe('2026-09-04')
    expect(contact.identity).toEqual({ first_name: 'Jane' })
    expect(contact.company).toEqual({})
    expect(contact.links).toEqual({
      portal: `https://portal.example.com/contacts/${record.id}`,
      self: `https://portal.example.com/api/v1/contacts/${record.id}`,
    })
  })

  it('tier 1 custom_fields are always present, with label and type from the definition', () => {
    const { contact } = assembleContact(record, caller({ definitions: defs('plan', 'region'), mappedCustomFieldKeys: new Set(['plan']) }))
    expect(contact.custom_fields).toEqual([{ key: 'plan', label: 'PLAN', type: 'text', value: 'gold', source: 'inbound_mapping', enriched_at: null }])
    expect(contact.missing['custom_fields.region']).toBe('unmapped')
  })

  it('tier 2 handles only when the caller has contact_handles and the account is permitted', () => {
    const off = assembleContact(record, caller()).contact
    expect(off.handles.emails).toEqual([])
    expect(off.handles.phones).toEqual([])
    expect(off.handles.business_email).toBe('jane@acme.example')
    expect(off.missing['handles.emails']).toBe('withheld_tier')
    expect(off.missing['handles.phones']).toBe('withheld_tier')

    const on = assembleContact(record, caller({ contactHandles: true })).contact
    expect(on.handles.emails).toEqual([{ value: 'jane@home.example', kind: 'personal', verified: true }])
    expect(on.handles.phones).toEqual([{ value: '+15555550100', kind: 'mobile', dnc: false, dnc_known: true, callable: true }])

    const notPermitted = assembleContact(record, caller({ contactHandles: true, permittedTiers: [1, 3] }))
    expect(notPermitted.contact.handles.emails).toEqual([])
    expect(notPermitted.contact.missing['handles.emails']).toBe('withheld_tier')
    expect(notPermitted.fieldPolicy.withheld_tiers).toContain('contact_handles')
  })

  it('tier 3 traits are off by default, every trait key withheld, and released when enabled', () => {
    const off = assembleContact(record, caller()).contact
    expect(off.traits).toEqual([])
    expect(off.missing['traits.age']).toBe('withheld_tier')
    const on = assembleContact(record, caller({ sensitiveTraits: true })).contact
    expect(on.traits).toEqual([{ key: 'age', label: 'Age band', value: '35-44', group: 'demographics' }])
    expect('traits.age' in on.missing).toBe(false)
  })

  it('resolved_by is masked to a tier label, never the vendor stamp', () => {
    const { contact } = assembleContact(record, caller())
    expect(contact.provenance.resolved_by).toBe('person')
    expect(JSON.stringify(contact)).not.toContain('vendor-x')
    expect(assembleContact(record, caller({ resolvedByLabel: 'company' })).contact.provenance.resolved_by).toBe('company')
    expect(assembleContact(baseRecord(), caller()).contact.provenance.resolved_by).toBeUndefined()
  })

  it('an unresolved person misses enrichable keys as not_enriched; a resolved one as no_source', () => {
    expect(assembleContact(baseRecord(), caller()).contact.missing['company.industry']).toBe('not_enriched')
    expect(assembleContact(baseRecord({ resolved_by: 'v' }), caller()).contact.missing['company.industry']).toBe('no_source')
  })
})

describe('Contact assembly: phone compliance', () => {
  const phones = [
    { value: '+15555550101', kind: 'mobile', dnc: false, dnc_known: true }, // callable
    { value: '+15555550102', kind: 'mobile', dnc: true, dnc_known: true }, // on the DNC list
    { value: '+15555550103', kind: 'work', dnc: null, dnc_known: false }, // status unknown
    { value: '+15555550104', kind: 'work', dnc: false, dnc_known: false }, // unknown even if dnc false
    { value: '+15555550105', kind: null, dnc: null, dnc_known: true }, // known, not on the list
  ]
  const { contact, fieldPolicy } = assembleContact(baseRecord({ phones }), caller({ contactHandles: true }))

  it('callable = dnc_known AND NOT dnc; non-callable numbers are never emitted', () => {
    expect(contact.handles.phones.map((p) => p.value)).toEqual(['+15555550101', '+15555550105'])
    for (const p of contact.handles.phones) expect(p.callable).toBe(true)
    const text = JSON.stringify(contact)
    for (const v of ['+15555550102', '+15555550103', '+15555550104']) expect(text).not.toContain(v)
  })

  it('names each withheld number in missing as withheld_compliance', () => {
    expect(contact.missing['handles.phones[1]']).toBe('withheld_compliance')
    expect(contact.missing['handles.phones[2]']).toBe('withheld_compliance')
    expect(contact.missing['handles.phones[3]']).toBe('withheld_compliance')
    expect(fieldPolicy.missing_reason.withheld_compliance).toBe(3)
  })
})

describe('Contact assembly: the K invariant (property)', () => {
  it('every key of K appears exactly once, as a value or in missing; FieldPolicy counts agree; output is schema-valid', async () => {
    const validator = await contractValidator()
    fc.assert(
      fc.property(
        definitionArb.chain((definitions) =>
          fc.tuple(
            fc.constant(definitions),
            recordArb(definitions.map((d) => d.key)),
            tiersArb,
            fc.boolean(),
            fc.boolean(),
            fc.option(fc.subarray(definitions.map((d) => d.key)), { nil: null }),
          ),
        ),
        ([definitions, record, permittedTiers, contactHandles, sensitiveTraits, mapped]) => {
          const c = caller({ definitions, permittedTiers, contactHandles, sensitiveTraits, mappedCustomFieldKeys: mapped ? new Set(mapped) : null })
          const { contact, fieldPolicy } = assembleContact(record as ContactRecord, c)
          const handlesReleased = contactHandles && permittedTiers.includes(2)
          const k = expectedK(record as ContactRecord, handlesReleased, definitions)
          expect(new Set(k).size).toBe(k.length)
          // the code's own K (the order `missing` is written in) is the documented one
          const codeK = keySetOf(record as ContactRecord, {
            contactHandles: handlesReleased,
            sensitiveTraits: sensitiveTraits && permittedTiers.includes(3),
            definitions,
          })
          expect([...codeK].sort()).toEqual([...k].sort())
          const missingKeys = Object.keys(contact.missing)
          const values = valueKeys(contact, k)
          // never both, never neither, nothing outside K
          for (const key of values) expect(missingKeys).not.toContain(key)
          expect([...values, ...missingKeys].sort()).toEqual([...k].sort())
          for (const reason of Object.values(contact.missing)) expect(REASONS).toContain(reason)
          // FieldPolicy agrees with the object
          expect(fieldPolicy.included).toBe(values.length)
          expect(fieldPolicy.missing).toBe(missingKeys.length)
          expect(Object.keys(fieldPolicy.missing_reason).sort()).toEqual(REASONS)
          for (const r of REASONS)
            expect(fieldPolicy.missing_reason[r as keyof typeof fieldPolicy.missing_reason]).toBe(Object.values(contact.missing).filter((x) => x === r).length)
          // compliance and tiers
          for (const p of contact.handles.phones) {
            expect(p.callable).toBe(true)
            expect(p.dnc_known).toBe(true)
            expect(p.dnc).not.toBe(true)
          }
          if (!(contactHandles && permittedTiers.includes(2))) expect(contact.handles.emails.length + contact.handles.phones.length).toBe(0)
          if (!(sensitiveTraits && permittedTiers.includes(3))) expect(contact.traits).toEqual([])
          validator.assertContact(contact)
          validator.assertFieldPolicy(fieldPolicy)
        },
      ),
      { numRuns: 300 },
    )
  })
})
