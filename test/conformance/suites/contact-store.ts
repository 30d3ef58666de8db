import { afterAll, beforeAll, expect, it } from 'vitest'
import type { ContactRecord, ContactUpsertInput } from '@lsv/shared/model/records.ts'
import { contactIdFor } from '@lsv/shared/model/ids.ts'
import type { ContactStore, MergeFn } from '@lsv/shared/ports/contact-store.ts'
import { randomSuffix } from '../../helpers/embedded.ts'

/** An adapter under test and how to release what it holds. */
export interface ContactStoreHarness {
  store: ContactStore
  close(): Promise<void>
}

const T0 = '2026-01-01T00:00:00.000Z'

function emptyRecord(accountId: string, input: ContactUpsertInput): ContactRecord {
  return {
    id: contactIdFor(accountId, input.source, input.external_id),
    account_id: accountId,
    source: input.source,
    external_id: input.external_id,
    subject_type: input.patch.subject_type ?? 'contact',
    identity: {},
    company: {},
    location: {},
    business_email: null,
    emails: [],
    phones: [],
    traits: [],
    custom_fields: {},
    name_source: null,
    resolved_by: input.resolved_by ?? null,
    first_seen_at: input.at,
    last_seen_at: input.at,
    updated_at: input.at,
    versions: {},
  }
}

/**
 * A small stand-in for the real merge (domain/contacts/merge.ts): applies the patch, appends the
 * origin to the custom field `seq` (so the order of application is visible), counts applications
 * in `count`, and is idempotent by origin (the origin is remembered under a dotted versions key).
 * Throws for origin `boom`.
 */
const testMerge: MergeFn = (existing, input, accountId) => {
  if (input.origin === 'boom') throw new Error('merge exploded')
  const seen = `origin.${input.origin}`
  if (existing?.versions[seen]) return null
  const base = existing ?? emptyRecord(accountId, input)
  const seq = (base.custom_fields.seq?.value as string[] | undefined) ?? []
  const count = (base.custom_fields.count?.value as number | undefined) ?? 0
  return {
    ...base,
    identity: { ...base.identity, ...input.patch.identity },
    business_email: input.patch.business_email !== undefined ? input.patch.business_email : base.business_email,
    custom_fields: {
      ...base.custom_fields,
      ...input.patch.custom_fields,
      seq: { value: [...seq, input.origin], source: 'inbound_mapping', enriched_at: null },
      count: { value: count + 1, source: 'inbound_mapping', enriched_at: null },
    },
    last_seen_at: input.at,
    updated_at: input.at,
    versions: { ...base.versions, [seen]: input.at },
  }
}

function input(externalId: string, origin: string, overrides: Partial<ContactUpsertInput> = {}): ContactUpsertInput {
  return { source: 'crm', external_id: externalId, writer: 'provider', at: T0, origin, patch: {}, ...overrides }
}

const seqOf = (r: ContactRecord | null) => r?.custom_fields.seq?.value
const countOf = (r: ContactRecord | null) => r?.custom_fields.count?.value

export function contactStoreConformance(open: () => Promise<ContactStoreHarness>): void {
  let h: ContactStoreHarness
  let store: ContactStore
  const accounts: string[] = []
  const newAccount = () => {
    const id = `acc-${randomSuffix()}`
    accounts.push(id)
    return id
  }

  beforeAll(async () => {
    h = await open()
    store = h.store
  })
  afterAll(async () => {
    for (const id of accounts) await store.deleteAccountData(id)
    await h.close()
  })

  it('creates, updates and leaves unchanged, and stores maps whose keys hold dots', async () => {
    const acc = newAccount()
    const patch = {
      identity: { first_name: 'Ada', title: undefined },
      custom_fields: { 'plan.tier': { value: 'gold', source: 'inbound_mapping' as const, enriched_at: null } },
    }
    const [created] = await store.upsertBatch(acc, [input('e1', 'm1', { patch })], testMerge)
    const id = contactIdFor(acc, 'crm', 'e1')
    expect(created).toEqual({ contactId: id, result: 'created' })

    const [updated] = await store.upsertBatch(acc, [input('e1', 'm2', { patch: { identity: { last_name: 'Lovelace' } } })], testMerge)
    expect(updated).toEqual({ contactId: id, result: 'updated' })
    const [unchanged] = await store.upsertBatch(acc, [input('e1', 'm2')], testMerge)
    expect(unchanged).toEqual({ contactId: id, result: 'unchanged' })

    const stored = await store.get(acc, id)
    expect(stored).toMatchObject({
      id,
      account_id: acc,
      source: 'crm',
      external_id: 'e1',
      identity: { first_name: 'Ada', last_name: 'Lovelace' },
      versions: { 'origin.m1': T0, 'origin.m2': T0 },
    })
    expect(stored!.custom_fields['plan.tier']).toEqual({ value: 'gold', source: 'inbound_mapping', enriched_at: null })
    expect(seqOf(stored)).toEqual(['m1', 'm2'])
    expect(await store.getByAnchor(acc, 'crm', 'e1')).toEqual(stored)
    expect(await store.get(acc, contactIdFor(acc, 'crm', 'nope'))).toBeNull()
    expect(await store.getByAnchor(acc, 'crm', 'nope')).toBeNull()
  })

  it('applies several inputs for one document in batch order and reports each', async () => {
    const acc = newAccount()
    const out = await store.upsertBatch(acc, [input('e1', 'a'), input('e2', 'x'), input('e1', 'b'), input('e1', 'a'), input('e1', 'c')], testMerge)
    const id1 = contactIdFor(acc, 'crm', 'e1')
    const id2 = contactIdFor(acc, 'crm', 'e2')
    expect(out).toEqual([
      { contactId: id1, result: 'created' },
      { contactId: id2, result: 'created' },
      { contactId: id1, result: 'updated' },
      { contactId: id1, result: 'unchanged' },
      { contactId: id1, result: 'updated' },
    ])
    expect(seqOf(await store.get(acc, id1))).toEqual(['a', 'b', 'c'])
    expect(seqOf(await store.get(acc, id2))).toEqual(['x'])
  })

  it('is idempotent: re-applying a whole batch changes nothing', async () => {
    const acc = newAccount()
    const batch = [input('e1', 'm1'), input('e2', 'm2'), input('e1', 'm3')]
    await store.upsertBatch(acc, batch, testMerge)
    const before = await store.list(acc, { limit: 10 })
    const again = await store.upsertBatch(acc, batch, testMerge)
    expect(again.map((o) => o.result)).toEqual(['unchanged', 'unchanged', 'unchanged'])
    expect(await store.list(acc, { limit: 10 })).toEqual(before)
  })

  it('loses no write when 30 batches update the same document concurrently', async () => {
    const acc = newAccount()
    await store.upsertBatch(acc, [input('hot', 'seed')], testMerge)
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, (_, i) => store.upsertBatch(acc, [input('hot', `w${i}`), input(`cold${i}`, `c${i}`)], testMerge)),
    )
    for (const [hot, cold] of outcomes) {
      expect(hot!.result).toBe('updated')
      expect(cold!.result).toBe('created')
    }
    const stored = await store.getByAnchor(acc, 'crm', 'hot')
    expect(countOf(stored)).toBe(31)
    expect([...(seqOf(stored) as string[])].sort()).toEqual(['seed', ...Array.from({ length: 30 }, (_, i) => `w${i}`)].sort())
  })

  it('loses no write when concurrent batches race to create the same document', async () => {
    const acc = newAccount()
    const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => store.upsertBatch(acc, [input('new', `n${i}`)], testMerge)))
    const results = outcomes.map(([o]) => o!.result).sort()
    expect(results).toEqual(['created', ...Array(9).fill('updated')])
    expect(countOf(await store.getByAnchor(acc, 'crm', 'new'))).toBe(10)
  })

  it('fails only the record whose merge throws', async () => {
    const acc = newAccount()
    const out = await store.upsertBatch(acc, [input('e1', 'm1'), input('e2', 'boom'), input('e3', 'm3'), input('e1', 'boom'), input('e1', 'm4')], testMerge)
    expect(out.map((o) => o.result)).toEqual(['created', 'failed', 'created', 'failed', 'updated'])
    expect(out[1]!.error).toContain('merge exploded')
    expect(out[1]!.contactId).toBe(contactIdFor(acc, 'crm', 'e2'))
    expect(await store.getByAnchor(acc, 'crm', 'e2')).toBeNull()
    expect(seqOf(await store.getByAnchor(acc, 'crm', 'e1'))).toEqual(['m1', 'm4'])
    expect(await store.getByAnchor(acc, 'crm', 'e3')).not.toBeNull()
  })

  it('writes batches larger than one chunk and reports progress up to the record count', async () => {
    const acc = newAccount()
    const batch = Array.from({ length: 620 }, (_, i) => input(`bulk${i % 600}`, `m${i}`))
    const progress: number[] = []
    const out = await store.upsertBatch(acc, batch, testMerge, { onProgress: (done) => progress.push(done) })
    expect(out.filter((o) => o.result === 'created')).toHaveLength(600)
    expect(out.filter((o) => o.result === 'updated')).toHaveLength(20)
    expect(progress.length).toBeGreaterThanOrEqual(2)
    expect(progress.at(-1)).toBe(620)
    expect([...progress].sort((a, b) => a - b)).toEqual(progress)
    expect(seqOf(await store.getByAnchor(acc, 'crm', 'bulk5'))).toEqual(['m5', 'm605'])
    expect(await store.upsertBatch(acc, [], testMerge)).toEqual([])
  })

  it('merges into existing documents that follow a chunk of new ones (no blind overwrite)', async () => {
    const acc = newAccount()
    // existing documents, found only in the second chunk of the batch below
    await store.upsertBatch(
      acc,
      Array.from({ length: 30 }, (_, i) => input(`late${i}`, `seed${i}`)),
      testMerge,
    )
    const batch = [...Array.from({ length: 500 }, (_, i) => input(`fresh${i}`, `f${i}`)), ...Array.from({ length: 40 }, (_, i) => input(`late${i}`, `l${i}`))]
    const out = await store.upsertBatch(acc, batch, testMerge)
    expect(out.filter((o) => o.result === 'created')).toHaveLength(510)
    expect(out.filter((o) => o.result === 'updated')).toHaveLength(30)
    expect(out.filter((o) => o.result === 'failed')).toHaveLength(0)
    expect(seqOf(await store.getByAnchor(acc, 'crm', 'late7'))).toEqual(['seed7', 'l7'])
    expect(seqOf(await store.getByAnchor(acc, 'crm', 'late35'))).toEqual(['l35'])
    expect(seqOf(await store.getByAnchor(acc, 'crm', 'fresh499'))).toEqual(['f499'])
  })

  it('finds by network url and by business email (lower-case), within the account only', async () => {
    const acc = newAccount()
    const other = newAccount()
    const url = `https://network.example/in/${randomSuffix()}`
    const email = `ada.${randomSuffix()}@acme.example`
    await store.upsertBatch(other, [input('o1', 'm', { patch: { identity: { network_url: url }, business_email: email } })], testMerge)
    expect(await store.findByNetworkUrl(acc, url)).toBeNull()
    expect(await store.findByBusinessEmail(acc, email)).toBeNull()

    await store.upsertBatch(
      acc,
      [input('a1', 'm', { patch: { identity: { network_url: url } } }), input('a2', 'm', { patch: { business_email: email } })],
      testMerge,
    )
    expect((await store.findByNetworkUrl(acc, url))?.external_id).toBe('a1')
    expect((await store.findByBusinessEmail(acc, email))?.external_id).toBe('a2')
    expect((await store.findByBusinessEmail(acc, email.toUpperCase()))?.external_id).toBe('a2')
    expect(await store.findByNetworkUrl(acc, `${url}/x`)).toBeNull()
    expect(await store.findByBusinessEmail(acc, `x${email}`)).toBeNull()
  })

  it('lists by contact id ascending in keyset pages', async () => {
    const acc = newAccount()
    await store.upsertBatch(
      acc,
      Array.from({ length: 7 }, (_, i) => input(`p${i}`, 'm')),
      testMerge,
    )
    const ids = Array.from({ length: 7 }, (_, i) => contactIdFor(acc, 'crm', `p${i}`)).sort()
    const seen: string[] = []
    let after: string | undefined
    for (;;) {
      const page = await store.list(acc, { after, limit: 3 })
      expect(page.length).toBeLessThanOrEqual(3)
      if (page.length === 0) break
      seen.push(...page.map((r) => r.id))
      after = page.at(-1)!.id
    }
    expect(seen).toEqual(ids)
    expect((await store.list(acc, { after: ids[4], limit: 10 })).map((r) => r.id)).toEqual(ids.slice(5))
    expect(await store.list(acc, { after: ids[6], limit: 10 })).toEqual([])
    expect(await store.list(newAccount(), { limit: 10 })).toEqual([])
    // back (the portal's "Previous page"): the `limit` just below, still ascending
    // (mutation: returning them in the order read, descending, fails the first)
    expect((await store.list(acc, { before: ids[5], limit: 3 })).map((r) => r.id)).toEqual(ids.slice(2, 5))
    expect((await store.list(acc, { before: ids[2], limit: 3 })).map((r) => r.id)).toEqual(ids.slice(0, 2))
    expect(await store.list(acc, { before: ids[0], limit: 3 })).toEqual([])
  })

  it('deletes the contacts of one account only', async () => {
    const a = newAccount()
    const b = newAccount()
    for (const acc of [a, b]) {
      await store.upsertBatch(acc, [input('e1', 'm'), input('e2', 'm')], testMerge)
    }
    await store.deleteAccountData(a)
    expect(await store.list(a, { limit: 10 })).toEqual([])
    expect(await store.getByAnchor(a, 'crm', 'e1')).toBeNull()
    expect(await store.list(b, { limit: 10 })).toHaveLength(2)
    // the account can be written again afterwards
    const [again] = await store.upsertBatch(a, [input('e1', 'm')], testMerge)
    expect(again!.result).toBe('created')
  })
}
