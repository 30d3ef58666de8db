/** Valid wire examples of the contract's definitions; tests derive invalid ones from them. */

export const contactExample = () => ({
  object: 'contact',
  id: '3f1c2b8e-5d4a-4c6b-9e7f-0a1b2c3d4e5f',
  subject_type: 'person_profile',
  contract_version: '2026-09-04',
  identity: { first_name: 'Ada', last_name: 'Lovelace', full_name: 'Ada Lovelace', title: null, network_url: 'https://network.example/in/ada' },
  company: { name: 'Analytical Engines', domain: 'engines.example', website: 'https://engines.example', employee_count: '11-50' },
  location: { city: 'London', state: null, postal_code: 'EC1' },
  handles: {
    business_email: 'ada@engines.example',
    emails: [{ value: 'ada@home.example', kind: 'personal', verified: true }],
    phones: [{ value: '+442079460000', kind: 'mobile', dnc: false, dnc_known: true, callable: true }],
  },
  traits: [{ key: 'household_income', label: 'Household income', value: '100k-150k', group: 'financial' }],
  custom_fields: [
    { key: 'plan', label: 'Plan', type: 'select', value: 'pro', source: 'inbound_mapping', enriched_at: null },
    { key: 'tags', label: 'Tags', type: 'multi_select', value: ['a', 'b'], source: 'ai_enrichment', enriched_at: '2026-09-05T10:00:00Z' },
  ],
  missing: { 'identity.seniority': 'not_enriched', 'handles.phones[1]': 'withheld_compliance' },
  provenance: { first_seen_at: '2026-09-01T00:00:00Z', last_seen_at: '2026-09-04T12:30:00.123Z', name_source: 'form', resolved_by: 'person' },
  links: { portal: 'https://portal.example.com/contacts/3f1c2b8e', self: 'https://portal.example.com/api/v1/contacts/3f1c2b8e' },
})

/** The smallest valid Contact: every nested member is optional. */
export const minimalContactExample = () => ({
  object: 'contact',
  id: '3f1c2b8e-5d4a-4c6b-9e7f-0a1b2c3d4e5f',
  subject_type: 'company_profile',
  contract_version: '2026-09-04',
  identity: {},
  company: {},
  location: {},
  handles: {},
  traits: [],
  custom_fields: [],
  missing: {},
  provenance: {},
  links: {},
})

export const fieldPolicyExample = () => ({
  permitted_tiers: [1, 2, 3],
  enabled_tiers: [1],
  withheld_tiers: ['contact_handles', 'sensitive_traits'],
  included: 12,
  missing: 3,
  missing_reason: { withheld_tier: 2, not_enriched: 1 },
})

export const contactListExample = () => ({
  object: 'list',
  data: [contactExample(), minimalContactExample()],
  has_more: true,
  contract_version: '2026-09-04',
  next_cursor: 'opaque-cursor',
})

export const webhookEventExample = () => ({
  event: 'visitor.identified',
  contract_version: '2026-09-04',
  id: 'visit_01J9ZZ',
  emitted_at: '2026-09-04T12:30:00Z',
  tier: 'person',
  is_repeat: false,
  subject: contactExample(),
  field_policy: fieldPolicyExample(),
  visit: { captured_url: 'https://engines.example/pricing', domain_id: 'd1', referrer: null, visitor_id: 'v1', seen_at: '2026-09-04T12:29:59Z' },
  classification: 'high-intent',
  served_from: 'cache',
})
