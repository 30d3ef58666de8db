/**
 * DeliveryLog.listDue, the stranded-delivery sweep's query, on every adapter: waiting deliveries
 * (pending, retrying) due before the bound, oldest first, at most `limit`, done ones never; and
 * what one instance wrote, another lists. Times lie in 1990 so that no other test's deliveries in
 * the shared emulator are before the bound.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DeliveryLog } from '@lsv/shared/ports/delivery-log.ts'
import { createEmbeddedDeliveryLog } from '@lsv/shared/adapters/embedded/delivery-log.ts'
import { createFirestoreDeliveryLog } from '@lsv/shared/adapters/google/firestore-delivery-log.ts'
import { randomSuffix } from '../helpers/embedded.ts'
import { delivery } from './suites/tenant-store.ts'
import { twoEmbeddedInstances, twoFirestoreInstances, type TwoInstances } from './suites/two-instances.ts'

function listDueConformance(open: () => Promise<TwoInstances<DeliveryLog>>): void {
  let harness: TwoInstances<DeliveryLog>
  const account = `acc-${randomSuffix()}`
  // a minute of 1990 of this run's own, so that parallel runs of this file do not meet either
  const base = Date.UTC(1990, 0, 1) + Math.floor(Math.random() * 500_000) * 60_000
  const at = (s: number) => new Date(base + s * 1000).toISOString()

  beforeAll(async () => {
    harness = await open()
  })
  afterAll(async () => {
    await harness.store.deleteAccountData(account)
    await harness.close()
  })

  it('lists waiting deliveries due before the bound, oldest first, at most limit; never done ones', async () => {
    const i = `int-${randomSuffix()}`
    const p = `due-${randomSuffix()}`
    const rows = [
      delivery(account, i, { id: `${p}-late`, status: 'retrying', next_attempt_at: at(30) }),
      delivery(account, i, { id: `${p}-first`, status: 'pending', next_attempt_at: at(10) }),
      delivery(account, i, { id: `${p}-second`, status: 'retrying', next_attempt_at: at(20) }),
      delivery(account, i, { id: `${p}-future`, status: 'pending', next_attempt_at: at(60) }),
      delivery(account, i, { id: `${p}-done`, status: 'succeeded', next_attempt_at: null }),
      delivery(account, i, { id: `${p}-failed`, status: 'failed', next_attempt_at: null }),
    ]
    for (const d of rows) await harness.store.put(d)
    const ids = (list: { id: string }[]) => list.map((d) => d.id).filter((id) => id.startsWith(p))
    // mutation: order descending, or no bound -> other order or `-future` listed
    expect(ids(await harness.other.listDue(at(40), 100))).toEqual([`${p}-first`, `${p}-second`, `${p}-late`])
    // mutation: limit ignored -> three
    expect(ids(await harness.other.listDue(at(40), 2))).toEqual([`${p}-first`, `${p}-second`])
    // the bound is exclusive
    expect(ids(await harness.other.listDue(at(10), 100))).toEqual([])
    // a delivery that succeeded (next_attempt_at null) leaves the list
    await harness.store.put({ ...rows[1]!, status: 'succeeded', next_attempt_at: null })
    expect(ids(await harness.other.listDue(at(40), 100))).toEqual([`${p}-second`, `${p}-late`])
  })
}

describe('delivery log listDue: embedded (node:sqlite, two handles on one file)', () => {
  listDueConformance(() => twoEmbeddedInstances(createEmbeddedDeliveryLog))
})

describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('delivery log listDue: Firestore emulator (two clients)', () => {
  listDueConformance(() => twoFirestoreInstances(createFirestoreDeliveryLog))
})
