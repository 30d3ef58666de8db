import { afterAll, beforeAll, expect, it } from 'vitest'
import type { DeliveryRecord } from '@lsv/shared/model/records.ts'
import type { DeliveryLog } from '@lsv/shared/ports/delivery-log.ts'
import { randomSuffix } from '../../helpers/embedded.ts'
import { delivery } from './tenant-store.ts'
import type { TwoInstances } from './two-instances.ts'

const T0 = '2026-01-01T00:00:00.000Z'
const at = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000).toISOString()

/** The behaviour every DeliveryLog adapter must share. Call inside a `describe`. */
export function deliveryLogConformance(open: () => Promise<TwoInstances<DeliveryLog>>): void {
  let harness: TwoInstances<DeliveryLog>
  let log: DeliveryLog
  const accounts: string[] = []
  const newAccount = () => {
    const id = `acc-${randomSuffix()}`
    accounts.push(id)
    return id
  }

  beforeAll(async () => {
    harness = await open()
    log = harness.store
  })
  afterAll(async () => {
    for (const id of accounts) await log.deleteAccountData(id)
    await harness.close()
  })

  it('upserts deliveries and pages them newest first', async () => {
    const a = newAccount()
    const i = `int-${randomSuffix()}`
    const other = `int-${randomSuffix()}`
    const p = `del-${randomSuffix()}`
    // two pairs share a created_at, so the id breaks the tie
    const rows = [
      delivery(a, i, { id: `${p}-1`, created_at: at(1) }),
      delivery(a, i, { id: `${p}-2`, created_at: at(2) }),
      delivery(a, i, { id: `${p}-3`, created_at: at(2) }),
      delivery(a, i, { id: `${p}-4`, created_at: at(3) }),
      delivery(a, i, { id: `${p}-5`, created_at: at(4) }),
      delivery(a, i, { id: `${p}-6`, created_at: at(4) }),
    ]
    for (const d of [rows[3]!, rows[0]!, rows[5]!, rows[2]!, rows[1]!, rows[4]!]) await log.put(d)
    await log.put(delivery(a, other, { created_at: at(3) }))

    const done = {
      ...rows[0]!,
      status: 'succeeded' as const,
      attempts: [{ attempt: 1, at: at(1), status_code: 200, error: null, latency_ms: 12, response_excerpt: 'ok' }],
    }
    await log.put(done)
    rows[0] = done
    expect(await log.get(done.id)).toEqual(done)
    expect(await log.get(`missing-${randomSuffix()}`)).toBeNull()

    const want = [rows[5], rows[4], rows[3], rows[2], rows[1], rows[0]]
    const pages: DeliveryRecord[][] = []
    let before: string | undefined
    for (;;) {
      const page = await log.list(i, { before, limit: 4 })
      pages.push(page)
      if (page.length < 4) break
      before = page.at(-1)!.id
    }
    expect(pages.map((pg) => pg.length)).toEqual([4, 2])
    expect(pages.flat()).toEqual(want)
    expect(await log.list(i, { limit: 2 })).toEqual(want.slice(0, 2))
    expect(await log.list(i, { before: rows[2]!.id, limit: 10 })).toEqual([rows[1], rows[0]])
    // a cursor that is not a delivery of this integration ends the listing
    expect(await log.list(i, { before: `missing-${randomSuffix()}`, limit: 10 })).toEqual([])
  })

  it('lists a time range of created_at (from inclusive, before exclusive), paged with the same cursor', async () => {
    const a = newAccount()
    const i = `int-${randomSuffix()}`
    const p = `del-${randomSuffix()}`
    const rows = [1, 2, 2, 3, 4, 5].map((s, n) => delivery(a, i, { id: `${p}-${n}`, created_at: at(s) }))
    for (const d of rows) await log.put(d)
    // at(2) up to (not including) at(4): rows 1, 2 (same time, id breaks the tie) and 3
    const range = { createdFrom: at(2), createdBefore: at(4) }
    // mutation: dropping the createdFrom bound in an adapter makes this include rows[0]
    expect(await log.list(i, { ...range, limit: 10 })).toEqual([rows[3], rows[2], rows[1]])
    const first = await log.list(i, { ...range, limit: 2 })
    expect(first).toEqual([rows[3], rows[2]])
    // the cursor keeps the range: the next page stops at its lower bound
    expect(await log.list(i, { ...range, before: first.at(-1)!.id, limit: 10 })).toEqual([rows[1]])
    // one open end each
    expect(await log.list(i, { createdFrom: at(4), limit: 10 })).toEqual([rows[5], rows[4]])
    expect(await log.list(i, { createdBefore: at(2), limit: 10 })).toEqual([rows[0]])
  })

  it('lists one status only: same order, cursor and time range; another integration never', async () => {
    const a = newAccount()
    const i = `int-${randomSuffix()}`
    const other = `int-${randomSuffix()}`
    const p = `del-${randomSuffix()}`
    const failed = (n: number, s: number) => delivery(a, i, { id: `${p}-f${n}`, status: 'failed', created_at: at(s) })
    // f2 and f3 share a time (the id breaks the tie); succeeded rows sit between the failed ones
    const rows = [failed(1, 1), failed(2, 2), failed(3, 2), failed(4, 4), failed(5, 6)]
    for (const d of rows) await log.put(d)
    for (const s of [1, 3, 5]) await log.put(delivery(a, i, { status: 'succeeded', created_at: at(s) }))
    await log.put(delivery(a, other, { status: 'failed', created_at: at(3) }))
    const [f1, f2, f3, f4, f5] = rows

    // mutation: ignoring `status` in an adapter lists the succeeded rows too
    expect(await log.list(i, { status: 'failed', limit: 10 })).toEqual([f5, f4, f3, f2, f1])
    expect(await log.list(i, { status: 'pending', limit: 10 })).toEqual([])
    const first = await log.list(i, { status: 'failed', limit: 2 })
    expect(first).toEqual([f5, f4])
    // the cursor goes on within the status, across the tie on created_at
    const second = await log.list(i, { status: 'failed', before: first.at(-1)!.id, limit: 2 })
    expect(second).toEqual([f3, f2])
    expect(await log.list(i, { status: 'failed', before: second.at(-1)!.id, limit: 2 })).toEqual([f1])
    // a cursor whose row changed status since is still a position (a replayed delivery)
    await log.put({ ...f4!, status: 'pending' })
    expect(await log.list(i, { status: 'failed', before: f4!.id, limit: 10 })).toEqual([f3, f2, f1])
    // with the time range: at(2) up to (not including) at(6)
    // mutation: dropping the range from the status statement in an adapter adds f5 and f1
    expect(await log.list(i, { status: 'failed', createdFrom: at(2), createdBefore: at(6), limit: 10 })).toEqual([f3, f2])
    expect(await log.list(i, { status: 'failed', createdFrom: at(2), before: f3!.id, limit: 10 })).toEqual([f2])
    // another integration's failed delivery is never listed under this one, nor its cursor
    expect((await log.list(other, { status: 'failed', limit: 10 })).map((d) => d.integration_id)).toEqual([other])
    expect(await log.list(i, { status: 'failed', before: (await log.list(other, { limit: 1 }))[0]!.id, limit: 10 })).toEqual([])
  })

  it('counts each status of an integration, in a time range, each stopping at the cap', async () => {
    const a = newAccount()
    const i = `int-${randomSuffix()}`
    const other = `int-${randomSuffix()}`
    const statuses = ['failed', 'failed', 'failed', 'failed', 'succeeded', 'succeeded', 'retrying'] as const
    for (const [n, status] of statuses.entries()) await log.put(delivery(a, i, { status, created_at: at(n) }))
    await log.put(delivery(a, other, { status: 'failed', created_at: at(1) }))
    // mutation: counting without the integration in an adapter makes failed 5
    expect(await log.countByStatus(i, { cap: 100 })).toEqual({ pending: 0, retrying: 1, succeeded: 2, failed: 4 })
    // mutation: dropping the cap (limit) in an adapter makes failed 4 here
    expect(await log.countByStatus(i, { cap: 3 })).toEqual({ pending: 0, retrying: 1, succeeded: 2, failed: 3 })
    // at(2) up to (not including) at(5): failed 2 and 3, succeeded 4
    expect(await log.countByStatus(i, { createdFrom: at(2), createdBefore: at(5), cap: 100 })).toEqual({ pending: 0, retrying: 0, succeeded: 1, failed: 2 })
    expect(await log.countByStatus(`int-${randomSuffix()}`, { cap: 100 })).toEqual({ pending: 0, retrying: 0, succeeded: 0, failed: 0 })
  })

  it('what one instance records, the other reads (the dispatcher writes, the portal lists)', async () => {
    const d = delivery(newAccount(), `int-${randomSuffix()}`)
    await harness.store.put(d)
    expect(await harness.other.get(d.id)).toEqual(d)
    const retried = {
      ...d,
      status: 'retrying' as const,
      next_attempt_at: at(60),
      attempts: [{ attempt: 1, at: at(0), status_code: 500, error: null, latency_ms: 3, response_excerpt: null }],
    }
    await harness.other.put(retried)
    expect(await harness.store.list(d.integration_id, { limit: 5 })).toEqual([retried])
  })

  it('deletes the deliveries of one account only', async () => {
    const x = newAccount()
    const y = newAccount()
    const [dx, dy] = [delivery(x, `int-${randomSuffix()}`), delivery(y, `int-${randomSuffix()}`)]
    await log.put(dx)
    await log.put(dy)
    await log.deleteAccountData(x)
    expect(await log.get(dx.id)).toBeNull()
    expect(await log.list(dx.integration_id, { limit: 10 })).toEqual([])
    expect(await log.get(dy.id)).toEqual(dy)
    expect(await log.list(dy.integration_id, { limit: 10 })).toEqual([dy])
  })
}
