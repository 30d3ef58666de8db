import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { mergeContact } from '@lsv/shared/domain/contacts/merge.ts'
import { contactIdFor } from '@lsv/shared/model/ids.ts'
import type { ContactRecord, ContactUpsertInput, WriterClass } from '@lsv/shared/model/records.ts'

const ACCOUNT = '7c0b5a2e-7d43-4d0e-9f43-000000000001'

function input(over: Partial<ContactUpsertInput> & { patch: ContactUpsertInput['patch'] }): ContactUpsertInput {
  return { source: 'crm', external_id: 'x1', writer: 'manual', at: '2026-09-01T00:00:00.000Z', origin: 'm1:0', ...over }
}

function applyAll(inputs: ContactUpsertInput[]): ContactRecord | null {
  let record: ContactRecord | null = null
  for (const i of inputs) record = mergeContact(record, i, ACCOUNT) ?? record
  return record
}

describe('mergeContact', () => {
  it('creates the record under the deterministic id with first/last seen at the event time', () => {
    const r = mergeContact(null, input({ patch: { identity: { first_name: 'Ada' }, business_email: ' Ada@Example.COM ' } }), ACCOUNT)!
    expect(r.id).toBe(contactIdFor(ACCOUNT, 'crm', 'x1'))
    expect(r.identity.first_name).toBe('Ada')
    expect(r.business_email).toBe('ada@example.com')
    expect(r.name_source).toBe('manual')
    expect(r.first_seen_at).toBe('2026-09-01T00:00:00.000Z')
    expect(r.last_seen_at).toBe('2026-09-01T00:00:00.000Z')
  })

  it('returns null when a write changes nothing (redelivery)', () => {
    const i = input({ patch: { identity: { first_name: 'Ada' } } })
    const r = mergeContact(null, i, ACCOUNT)!
    expect(mergeContact(r, i, ACCOUNT)).toBeNull()
  })

  it('never lets a lower writer overwrite a value set by a higher one (form > manual > enrichment > provider)', () => {
    const ladder: WriterClass[] = ['provider', 'enrichment', 'manual', 'form']
    for (let hi = 1; hi < ladder.length; hi++) {
      for (let lo = 0; lo < hi; lo++) {
        const first = mergeContact(null, input({ writer: ladder[hi]!, patch: { identity: { first_name: 'High' }, company: { name: 'HighCo' } } }), ACCOUNT)!
        const after = mergeContact(
          first,
          input({
            writer: ladder[lo]!,
            at: '2026-10-01T00:00:00.000Z',
            origin: 'later',
            patch: { identity: { first_name: 'Low', title: 'CTO' }, company: { name: 'LowCo' } },
          }),
          ACCOUNT,
        )!
        expect(after.identity.first_name).toBe('High')
        expect(after.company.name).toBe('HighCo')
        expect(after.name_source).toBe(ladder[hi])
        // a field nobody higher has set is still filled in, and seen times move on
        expect(after.identity.title).toBe('CTO')
        expect(after.last_seen_at).toBe('2026-10-01T00:00:00.000Z')
      }
    }
  })

  it('lets a higher or equal writer replace names and records it in name_source', () => {
    const p = mergeContact(null, input({ writer: 'provider', patch: { identity: { first_name: 'Prov' } } }), ACCOUNT)!
    expect(p.name_source).toBe('provider')
    const f = mergeContact(p, input({ writer: 'form', at: '2026-08-01T00:00:00.000Z', origin: 'f', patch: { identity: { first_name: 'Form' } } }), ACCOUNT)!
    expect(f.identity.first_name).toBe('Form')
    expect(f.name_source).toBe('form')
    expect(f.first_seen_at).toBe('2026-08-01T00:00:00.000Z')
    expect(f.last_seen_at).toBe('2026-09-01T00:00:00.000Z')
  })

  it('keeps resolved_by insert-only and ignores null values', () => {
    const a = mergeContact(null, input({ resolved_by: 'ip', patch: { identity: { title: 'CEO' } } }), ACCOUNT)!
    const b = mergeContact(a, input({ resolved_by: 'email', at: '2026-09-02T00:00:00.000Z', origin: 'b', patch: { identity: { title: null } } }), ACCOUNT)!
    expect(b.resolved_by).toBe('ip')
    expect(b.identity.title).toBe('CEO')
    expect(b.last_seen_at).toBe('2026-09-02T00:00:00.000Z')
  })

  it('converges: any order and any duplication of the same writes gives the single in-order result', () => {
    const writer = fc.constantFrom<WriterClass>('provider', 'enrichment', 'manual', 'form')
    const name = fc.option(fc.constantFrom('Ann', 'Bob', 'Cy'), { nil: undefined })
    const write = fc.record({
      writer,
      day: fc.integer({ min: 1, max: 28 }),
      first: name,
      last: name,
      title: name,
      email: fc.option(fc.constantFrom('a@x.com', 'b@x.com'), { nil: undefined }),
      cf: fc.option(fc.constantFrom('red', 'blue'), { nil: undefined }),
      resolver: fc.option(fc.constantFrom('ip', 'email'), { nil: undefined }),
    })
    fc.assert(
      fc.property(fc.array(write, { minLength: 1, maxLength: 8 }), fc.integer(), (writes, seed) => {
        const inputs = writes.map((w, i) =>
          input({
            writer: w.writer,
            at: `2026-09-${String(w.day).padStart(2, '0')}T00:00:00.000Z`,
            origin: `msg:${i}`,
            ...(w.resolver ? { resolved_by: w.resolver } : {}),
            patch: {
              identity: { first_name: w.first ?? null, last_name: w.last ?? null, title: w.title ?? null },
              ...(w.email ? { business_email: w.email } : {}),
              ...(w.cf ? { custom_fields: { color: { value: w.cf, source: 'inbound_mapping' as const, enriched_at: null } } } : {}),
            },
          }),
        )
        const reference = applyAll(inputs)
        // shuffle deterministically and duplicate every write
        const shuffled = [...inputs, ...inputs]
          .map((x, i) => ({ x, k: Math.sin(seed + i) }))
          .sort((a, b) => a.k - b.k)
          .map((e) => e.x)
        expect(applyAll(shuffled)).toEqual(reference)
      }),
      { numRuns: 300 },
    )
  })
})
