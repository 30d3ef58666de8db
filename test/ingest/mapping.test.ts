import { describe, expect, it } from 'vitest'
import type { CustomFieldDefinition, CustomFieldType } from '@lsv/shared/model/records.ts'
import {
  createRecordMapper,
  customFieldValue,
  normalizeKey,
  partnerCrmContactId,
  partnerCrmLocationId,
  partnerCrmMappings,
  partnerCrmRecord,
} from '@lsv/shared/domain/ingest/mapping.ts'
import { recordsOf, withinDepth, MAX_VALUE_DEPTH } from '@lsv/shared/domain/ingest/push-body.ts'

const def = (key: string, type: CustomFieldType): CustomFieldDefinition => ({ account_id: 'a', key, label: key, type, created_at: '' })

describe('field mapping (contract 2.5)', () => {
  it('normalizes keys: lower-case, every non-alphanumeric character removed', () => {
    expect(normalizeKey('First Name')).toBe('firstname')
    expect(normalizeKey('first_name')).toBe('firstname')
    expect(normalizeKey('FIRST-NAME!')).toBe('firstname')
    expect(normalizeKey('E-Mail')).toBe('email')
    expect(normalizeKey('Prénom')).toBe('prénom')
  })

  it('without mappings: exactly the six fallback fields, matched case-insensitively; everything else dropped', () => {
    const m = createRecordMapper([])
    const out = m.map({
      'External ID': 'x-1',
      EMAIL: ' Ann@Example.COM ',
      'first name': 'Ann',
      LastName: 'Lee',
      Company: 'Acme',
      title: 'CTO',
      phone: '+1 555',
      city: 'Oslo',
      notes: 'x',
    })
    expect(out.externalId).toBe('x-1')
    expect(out.patch).toEqual({
      identity: { first_name: 'Ann', last_name: 'Lee', full_name: 'Ann Lee', title: 'CTO' },
      company: { name: 'Acme' },
      business_email: 'ann@example.com',
    })
  })

  it('with mappings: only mapped keys land, unmapped keys (even the six) are dropped, never guessed', () => {
    const m = createRecordMapper([
      { from: 'Work Email', to: 'email' },
      { from: 'given', to: 'first_name' },
      { from: 'crm_id', to: 'external_id' },
    ])
    const out = m.map({ work_email: 'W@X.io', given: 'Bo', first_name: 'Ignored', last_name: 'Dropped', crm_id: 77, external_id: 'not-the-anchor' })
    expect(out.externalId).toBe('77')
    expect(out.patch).toEqual({ identity: { first_name: 'Bo', full_name: 'Bo' }, business_email: 'w@x.io' })
  })

  it("with mappings that do not name external_id, the record's own external_id key is the anchor", () => {
    const m = createRecordMapper([{ from: 'mail', to: 'email' }])
    expect(m.map({ external_id: 'e-1', mail: 'a@b.co' }).externalId).toBe('e-1')
    expect(m.anchorOf({ ExternalId: 'e-2' })).toBe('e-2')
  })

  it('anchors: non-blank strings up to 256 characters (trimmed) or finite numbers; anything else is no anchor', () => {
    const m = createRecordMapper([])
    expect(m.anchorOf({ external_id: ' a ' })).toBe('a')
    expect(m.anchorOf({ external_id: 12.5 })).toBe('12.5')
    for (const v of ['', '   ', null, true, [], { a: 1 }, 'x'.repeat(257)]) expect(m.anchorOf({ external_id: v })).toBeNull()
    expect(m.anchorOf({ external_id: 'x'.repeat(256) })).toBe('x'.repeat(256))
    // the first key (in record order) that normalizes to the anchor and has a value wins
    expect(m.anchorOf({ external_id: null, 'External-ID': 'second' })).toBe('second')
    expect(m.map({ email: 'a@b.co' }).externalId).toBeNull()
  })

  it('null values are ignored; nested arrays and objects are stored as JSON text; numbers and booleans as text', () => {
    const m = createRecordMapper([
      { from: 'first_name', to: 'first_name' },
      { from: 'last_name', to: 'last_name' },
      { from: 'title', to: 'title' },
      { from: 'company', to: 'company' },
    ])
    const out = m.map({ first_name: null, last_name: ['a', { b: 1 }], title: { level: 3 }, company: 42 })
    expect(out.patch.identity).toEqual({ last_name: '["a",{"b":1}]', full_name: '["a",{"b":1}]', title: '{"level":3}' })
    expect(out.patch.company).toEqual({ name: '42' })
    expect(createRecordMapper([]).map({ title: true }).patch.identity).toEqual({ title: 'true' })
  })

  it('full_name is joined from the first and last name the record carries', () => {
    const m = createRecordMapper([])
    expect(m.map({ first_name: 'Ann' }).patch.identity).toEqual({ first_name: 'Ann', full_name: 'Ann' })
    expect(m.map({ last_name: 'Lee' }).patch.identity).toEqual({ last_name: 'Lee', full_name: 'Lee' })
    expect(m.map({ title: 'CTO' }).patch.identity).toEqual({ title: 'CTO' })
  })

  it('the business email is stored lower-cased; a value that is not an email is not stored', () => {
    const m = createRecordMapper([])
    expect(m.map({ email: 'MiXeD@Case.Example' }).patch.business_email).toBe('mixed@case.example')
    expect(m.map({ email: 'not an email' }).patch.business_email).toBeUndefined()
    expect(m.map({ email: '' }).patch.business_email).toBeUndefined()
  })

  it('two keys mapped to one target: the first mapping whose key has a value wins', () => {
    const m = createRecordMapper([
      { from: 'primary', to: 'email' },
      { from: 'secondary', to: 'email' },
    ])
    expect(m.map({ secondary: 's@x.io', primary: 'p@x.io' }).patch.business_email).toBe('p@x.io')
    expect(m.map({ secondary: 's@x.io', primary: null }).patch.business_email).toBe('s@x.io')
  })

  it('custom fields: typed per the thirteen-value vocabulary, source inbound_mapping; undefined keys are unmapped', () => {
    const types: CustomFieldType[] = [
      'boolean',
      'date',
      'email',
      'file',
      'large_text',
      'multi_select',
      'number',
      'phone',
      'select',
      'signature',
      'text',
      'textbox_list',
      'url',
    ]
    const defs = types.map((t) => def(`f_${t}`, t))
    const mappings = types.map((t) => ({ from: `in ${t}`, to: `custom_fields.f_${t}` }))
    const m = createRecordMapper([...mappings, { from: 'ghost', to: 'custom_fields.undefined_key' }], defs)
    const out = m.map({
      'in boolean': true,
      'in date': '2026-09-04',
      'in email': 'x@y.z',
      'in file': { url: 'https://f', name: 'a.pdf' },
      'in large_text': 'long',
      'in multi_select': ['a', 'b'],
      'in number': 12,
      'in phone': '+1',
      'in select': 'one',
      'in signature': { svg: '<svg/>' },
      'in text': ['as', 'json'],
      'in textbox_list': 'single',
      'in url': 'https://u',
      ghost: 'x',
    })
    const cf = out.patch.custom_fields!
    expect(Object.keys(cf).sort()).toEqual(types.map((t) => `f_${t}`).sort())
    for (const f of Object.values(cf)) expect(f).toMatchObject({ source: 'inbound_mapping', enriched_at: null })
    expect(cf.f_boolean!.value).toBe('true')
    expect(cf.f_number!.value).toBe('12')
    expect(cf.f_text!.value).toBe('["as","json"]')
    expect(cf.f_multi_select!.value).toEqual(['a', 'b'])
    expect(cf.f_textbox_list!.value).toEqual(['single'])
    expect(cf.f_file!.value).toEqual({ url: 'https://f', name: 'a.pdf' })
    expect(cf.f_signature!.value).toEqual({ svg: '<svg/>' })
    // Firestore holds no array inside an array: such a JSON value is kept as its text
    expect(customFieldValue('multi_select', [['a']])).toBe('[["a"]]')
  })

  it("partner CRM bodies: the contract's aliases in order, source-specific keys left for custom field mappings", () => {
    expect(partnerCrmContactId({ contactId: 'a', contact_id: 'b', id: 'c' })).toBe('a')
    expect(partnerCrmContactId({ contact_id: 'b', id: 'c' })).toBe('b')
    expect(partnerCrmContactId({ id: 'c' })).toBe('c')
    expect(partnerCrmContactId({ external_id: 'x' })).toBeNull()
    expect(partnerCrmLocationId({ locationId: 'l1', location_id: 'l2' })).toBe('l1')
    expect(partnerCrmLocationId({ location_id: 'l2' })).toBe('l2')
    const rec = partnerCrmRecord({
      contactId: 'p1',
      firstName: 'Ann',
      last_name: 'Lee',
      companyName: 'Acme',
      email: 'A@B.co',
      title: null,
      score: 9,
      external_id: 'sneaky',
    })
    const m = createRecordMapper(
      partnerCrmMappings([
        { from: 'score', to: 'custom_fields.score' },
        { from: 'x', to: 'first_name' },
      ]),
      [def('score', 'number')],
    )
    const out = m.map(rec)
    expect(out.externalId).toBe('p1')
    expect(out.patch).toEqual({
      identity: { first_name: 'Ann', last_name: 'Lee', full_name: 'Ann Lee' },
      company: { name: 'Acme' },
      business_email: 'a@b.co',
      custom_fields: { score: { value: '9', source: 'inbound_mapping', enriched_at: null } },
    })
  })
})

describe('push bodies', () => {
  it('values nested deeper than the limit are refused, without recursion', () => {
    let deep: unknown = 'x'
    for (let i = 0; i < MAX_VALUE_DEPTH; i++) deep = [deep]
    expect(withinDepth({ a: deep })).toBe(true)
    expect(withinDepth({ a: [deep] })).toBe(false)
    const hostile = JSON.parse(`{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`)
    expect(withinDepth(hostile)).toBe(false)
  })

  it('reads the three shapes', () => {
    expect(recordsOf({ contacts: [{ a: 1 }] }, 'contacts')).toEqual([{ a: 1 }])
    expect(recordsOf({ events: [{ resolution: { a: 1 } }] }, 'events')).toEqual([{ a: 1 }])
    expect(recordsOf({ contactId: 'x' }, 'partnercrm')).toEqual([{ contactId: 'x' }])
    expect(() => recordsOf({ events: [{ resolution: null }] }, 'events')).toThrow('invalid payload')
    expect(() => recordsOf({ events: [{}] }, 'events')).toThrow('invalid payload')
  })
})
