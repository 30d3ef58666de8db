import fc from 'fast-check'
import { contactIdFor } from '@lsv/shared/model/ids.ts'
import type { ContactRecord, CustomFieldDefinition, Tier } from '@lsv/shared/model/records.ts'
import { CUSTOM_FIELD_TYPES } from '@lsv/shared/model/records.ts'

/** A stored contact with every optional value either absent, null, blank or set. */
export function baseRecord(overrides: Partial<ContactRecord> = {}): ContactRecord {
  const account = 'acct-test'
  return {
    id: contactIdFor(account, 'crm', 'ext-1'),
    account_id: account,
    source: 'crm',
    external_id: 'ext-1',
    subject_type: 'contact',
    identity: {},
    company: {},
    location: {},
    business_email: null,
    emails: [],
    phones: [],
    traits: [],
    custom_fields: {},
    name_source: null,
    resolved_by: null,
    first_seen_at: '2026-09-01T10:00:00.000Z',
    last_seen_at: '2026-09-02T10:00:00.000Z',
    updated_at: '2026-09-02T10:00:00.000Z',
    versions: {},
    ...overrides,
  }
}

const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(fc.oneof(a, fc.constant('' as unknown as T)), { nil: null })
const word = fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/)
const text = fc.string({ minLength: 1, maxLength: 12 })

export const definitionArb: fc.Arbitrary<CustomFieldDefinition[]> = fc
  .uniqueArray(fc.record({ key: word, label: text, type: fc.constantFrom(...CUSTOM_FIELD_TYPES) }), { selector: (d) => d.key, maxLength: 6 })
  .map((defs) => defs.map((d) => ({ ...d, account_id: 'acct-test', created_at: '2026-09-01T00:00:00.000Z' })))

export function recordArb(definitionKeys: string[]): fc.Arbitrary<ContactRecord> {
  const cfKeys = [...definitionKeys, 'orphan_field']
  return fc
    .record({
      subject_type: fc.constantFrom('company_profile', 'contact', 'person_profile' as const),
      identity: fc.record(
        {
          first_name: maybe(text),
          last_name: maybe(text),
          full_name: maybe(text),
          title: maybe(text),
          seniority: maybe(text),
          network_url: maybe(fc.constant('https://network.example/in/x')),
        },
        { requiredKeys: [] },
      ),
      company: fc.record(
        {
          name: maybe(text),
          domain: maybe(text),
          website: maybe(fc.constant('https://acme.example')),
          industry: maybe(text),
          employee_count: maybe(text),
          est_revenue: maybe(text),
          network_url: maybe(fc.constant('https://network.example/company/acme')),
        },
        { requiredKeys: [] },
      ),
      location: fc.record({ city: maybe(text), state: maybe(text), postal_code: maybe(text) }, { requiredKeys: [] }),
      business_email: fc.option(fc.constant('jane@acme.example'), { nil: null }),
      emails: fc.array(
        fc.record({
          value: fc.option(fc.constant('jane@home.example'), { nil: null }),
          kind: fc.option(word, { nil: null }),
          verified: fc.option(fc.boolean(), { nil: null }),
        }),
        { maxLength: 3 },
      ),
      phones: fc.array(
        fc.record({
          value: fc.option(fc.constant('+15555550100'), { nil: null }),
          kind: fc.option(word, { nil: null }),
          dnc: fc.option(fc.boolean(), { nil: null }),
          dnc_known: fc.boolean(),
        }),
        { maxLength: 4 },
      ),
      traits: fc.array(
        fc.record({
          key: fc.option(fc.constantFrom('age', 'income', 'home', 'pets'), { nil: null }),
          label: fc.option(text, { nil: null }),
          value: fc.option(text, { nil: null }),
          group: fc.constantFrom('demographics', 'financial', 'household' as const),
        }),
        { maxLength: 4 },
      ),
      custom_fields: fc.dictionary(
        fc.constantFrom(...cfKeys),
        fc.record({
          value: fc.oneof(fc.constant(null), fc.constant(''), text, fc.integer(), fc.boolean(), fc.array(text, { maxLength: 2 })),
          source: fc.constantFrom('ai_enrichment', 'inbound_mapping', 'manual' as const),
          enriched_at: fc.option(fc.constant('2026-09-03T00:00:00.000Z'), { nil: null }),
        }),
      ),
      name_source: fc.constantFrom(null, 'enrichment', 'form', 'manual', 'provider' as const),
      resolved_by: fc.option(fc.constant('vendor-x'), { nil: null }),
    })
    .map((r) => baseRecord(r as Partial<ContactRecord>))
}

export const tiersArb: fc.Arbitrary<Tier[]> = fc.subarray([2, 3] as Tier[]).map((t) => [1, ...t] as Tier[])
