import { describe, expect, it } from 'vitest'
import { fieldPolicyOf } from '@lsv/shared/domain/contacts/field-policy.ts'

/**
 * FieldPolicy (contract 2.4) as one delivery's accounting, checked member by member with the
 * values written out (the K property test in test/outbound/assemble.test.ts checks the counts
 * against the assembled object).
 */
describe('fieldPolicyOf', () => {
  const none = {}

  it('withheld_tiers names exactly the gated tiers that are not enabled', () => {
    expect(fieldPolicyOf([1, 2, 3], [1, 2, 3], 0, none).withheld_tiers).toEqual([])
    expect(fieldPolicyOf([1, 2, 3], [1], 0, none).withheld_tiers).toEqual(['contact_handles', 'sensitive_traits'])
    expect(fieldPolicyOf([1, 2, 3], [1, 2], 0, none).withheld_tiers).toEqual(['sensitive_traits'])
    expect(fieldPolicyOf([1, 2, 3], [1, 3], 0, none).withheld_tiers).toEqual(['contact_handles'])
  })

  it('permitted and enabled tiers come out sorted and without repeats', () => {
    const p = fieldPolicyOf([3, 1, 2, 1], [3, 1, 3], 0, none)
    expect(p.permitted_tiers).toEqual([1, 2, 3])
    expect(p.enabled_tiers).toEqual([1, 3])
  })

  it('counts: included as given, missing and every reason from the missing map (all five present)', () => {
    const p = fieldPolicyOf([1, 2], [1], 7, {
      'identity.title': 'no_source',
      'company.industry': 'not_enriched',
      'custom_fields.plan': 'unmapped',
      'handles.phones[1]': 'withheld_compliance',
      'handles.emails': 'withheld_tier',
      traits: 'withheld_tier',
    })
    expect(p).toEqual({
      permitted_tiers: [1, 2],
      enabled_tiers: [1],
      withheld_tiers: ['contact_handles', 'sensitive_traits'],
      included: 7,
      missing: 6,
      missing_reason: { no_source: 1, not_enriched: 1, unmapped: 1, withheld_compliance: 1, withheld_tier: 2 },
    })
    expect(fieldPolicyOf([1], [1], 3, none)).toMatchObject({
      included: 3,
      missing: 0,
      missing_reason: { no_source: 0, not_enriched: 0, unmapped: 0, withheld_compliance: 0, withheld_tier: 0 },
    })
  })
})
