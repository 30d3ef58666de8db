import { afterAll, describe, expect, it } from 'vitest'
import { mergeContact } from '@lsv/shared/domain/contacts/merge.ts'
import type { ContactUpsertInput, WriterClass } from '@lsv/shared/model/records.ts'
import { randomUUID } from 'node:crypto'
import { createTestDeps } from '../helpers/deps.ts'
import { randomSuffix } from '../helpers/embedded.ts'
import { printFigure } from './support/figures.ts'

/**
 * Item 10: 500 concurrent upserts of one (source, external_id), from writers of every class,
 * each its own upsertBatch call (as 500 worker deliveries racing would be). Every call must
 * succeed, and the one row left must equal one of the inputs (no field from one writer mixed
 * with another's), with the name from the highest-precedence writer present (form > manual >
 * enrichment > provider, contract 2.1 / records.ts) and equal to what the same inputs give when
 * applied one after the other (the merge converges whatever the order).
 */

const N = 500
const WRITERS: WriterClass[] = ['provider', 'enrichment', 'manual', 'form']
const NAME_SOURCE: Record<WriterClass, string> = { form: 'form', manual: 'manual', enrichment: 'enrichment', provider: 'provider' }

function inputs(base: number): ContactUpsertInput[] {
  return Array.from({ length: N }, (_, i) => {
    const writer = WRITERS[i % WRITERS.length]!
    return {
      source: 'crm',
      external_id: 'the-one',
      writer,
      // distinct event times, deliberately not in index order
      at: new Date(base + ((i * 7919) % N) * 1000).toISOString(),
      origin: `msg-${i}:0`,
      patch: { identity: { first_name: `F${i}`, last_name: `L${i}`, title: `T${i}` } },
    }
  })
}

type Deps = Awaited<ReturnType<typeof createTestDeps>>

async function run(deps: Deps, label: string) {
  const accountId = randomUUID()
  const refAccount = randomUUID()
  try {
    const all = inputs(Date.UTC(2026, 8, 4))
    const settled = await Promise.allSettled(all.map((input) => deps.contacts.upsertBatch(accountId, [input], mergeContact)))
    const thrown = settled.filter((s) => s.status === 'rejected').length
    const failed = settled.flatMap((s) => (s.status === 'fulfilled' ? s.value : [])).filter((o) => o.result === 'failed')
    const row = await deps.contacts.getByAnchor(accountId, 'crm', 'the-one')

    // reference: the same inputs, one after the other
    for (const input of all) await deps.contacts.upsertBatch(refAccount, [input], mergeContact)
    const ref = await deps.contacts.getByAnchor(refAccount, 'crm', 'the-one')

    const id = row?.identity ?? {}
    const source = all.find((i) => i.patch.identity!.first_name === id.first_name)
    const consistent = source !== undefined && id.last_name === source.patch.identity!.last_name && id.title === source.patch.identity!.title
    printFigure(
      `contention-${label}`,
      `${thrown + failed.length} errors over ${N} concurrent upserts of one key; row ${consistent ? 'equals' : 'does NOT equal'} one input (${id.first_name}, name_source ${row?.name_source})`,
    )
    expect(thrown).toBe(0)
    expect(failed).toEqual([])
    expect(row).not.toBeNull()
    expect(consistent).toBe(true)
    expect(row!.name_source).toBe(NAME_SOURCE.form)
    expect(source!.writer).toBe('form')
    expect(id).toEqual(ref!.identity)
    expect(row!.name_source).toBe(ref!.name_source)
  } finally {
    await deps.contacts.deleteAccountData(accountId)
    await deps.contacts.deleteAccountData(refAccount)
  }
}

describe('reliability 10: contention on one contact (embedded)', () => {
  let deps: Deps
  afterAll(async () => {
    await deps?.cleanup()
  })
  it(`${N} concurrent upserts: 0 errors, one consistent row, name precedence kept`, async () => {
    deps = await createTestDeps()
    await run(deps, 'embedded')
  })
})

describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('reliability 10: contention on one contact (Firestore emulator)', () => {
  let deps: Deps
  afterAll(async () => {
    await deps?.cleanup()
  })
  it(`${N} concurrent upserts: 0 errors, one consistent row, name precedence kept`, async () => {
    deps = await createTestDeps({ backend: 'emulators' })
    await run(deps, `firestore-${randomSuffix(2)}`.replace(/-\w+$/, ''))
  })
})
