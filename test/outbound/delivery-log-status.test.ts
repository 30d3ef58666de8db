import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DeliveryRecord } from '@lsv/shared/model/records.ts'
import type { DeliveryLog } from '@lsv/shared/ports/delivery-log.ts'
import { listDeliveryLog } from '@lsv/shared/domain/webhooks/delivery-log.ts'
import { planRecover, RECOVER_MAX_DELIVERIES, statusCountsSince } from '@lsv/shared/domain/webhooks/recover.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

type Deps = Awaited<ReturnType<typeof createTestDeps>>

const T0 = Date.parse('2026-03-01T10:00:00.000Z')
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString()

/**
 * The status filter and recover ask the store for one status (its index, DeliveryLog.list with
 * `status`, countByStatus) instead of reading every delivery and testing each: a rare status
 * behind many others still answers a full page, and recover reads only failed records.
 */
describe('delivery log by status: the store narrows, the domain does not scan', () => {
  let deps: Deps
  const tenants: StoredTenant[] = []
  beforeAll(async () => {
    deps = await createTestDeps()
  })
  afterAll(async () => {
    for (const t of tenants) await t.cleanup()
    await deps.cleanup()
  })

  async function tenantWith(rows: Array<{ status: DeliveryRecord['status']; seconds: number; test?: boolean }>) {
    const t = await createTestTenant(deps, { ...ACCOUNT_ONLY, integration: { url: 'https://receiver.example/hooks' } })
    tenants.push(t)
    const records = rows.map(({ status, seconds, test }, n): DeliveryRecord => {
      const created = at(seconds)
      return {
        id: `dlv_${n}_${t.account.id}`,
        account_id: t.account.id,
        integration_id: t.integration.id,
        event_id: `${test ? 'evt_test_' : 'evt_'}${n}_${t.account.id}`,
        status,
        attempts: [],
        body: '{}',
        next_attempt_at: null,
        created_at: created,
        updated_at: created,
      }
    })
    // in parallel: the embedded log shares commits between concurrent puts
    await Promise.all(records.map((r) => deps.deliveries.put(r)))
    return { t, records }
  }

  /** the deps with a log that counts the records its listings return */
  function counting(): { deps: Deps; read: () => number } {
    let read = 0
    const inner = deps.deliveries
    const deliveries: DeliveryLog = {
      ...inner,
      list: async (id, options) => {
        const rows = await inner.list(id, options)
        read += rows.length
        return rows
      },
    }
    return { deps: { ...deps, deliveries }, read: () => read }
  }

  it('a rare status behind 300 others: a full page from the index, not a short page after 250 rows read', async () => {
    // 300 succeeded, newer than 3 failed (one of them a test event)
    const rows = [
      ...[1, 2, 3].map((s) => ({ status: 'failed' as const, seconds: s, test: s === 2 })),
      ...Array.from({ length: 300 }, (_, n) => ({ status: 'succeeded' as const, seconds: 10 + n })),
    ]
    const { t, records } = await tenantWith(rows)
    const spy = counting()
    const page = await listDeliveryLog(spy.deps, t.account.id, t.integration.id, { cursor: undefined, limit: 20, status: 'failed' })
    // mutation: filtering the status in the domain again (FILTER_SCAN_LIMIT 250) answers [] with has_more
    expect(page.data.map((d) => d.id)).toEqual([records[2]!.id, records[1]!.id, records[0]!.id])
    expect(page.has_more).toBe(false)
    expect(spy.read()).toBe(3)
    // with the kind filter too: the store narrows by status, the domain tests the kind
    const real = await listDeliveryLog(deps, t.account.id, t.integration.id, { cursor: undefined, limit: 20, status: 'failed', kind: 'real' })
    expect(real.data.map((d) => d.id)).toEqual([records[2]!.id, records[0]!.id])
    // paging by status keeps its cursor
    const first = await listDeliveryLog(deps, t.account.id, t.integration.id, { cursor: undefined, limit: 2, status: 'failed' })
    expect(first.has_more).toBe(true)
    const next = await listDeliveryLog(deps, t.account.id, t.integration.id, { cursor: first.next_cursor!, limit: 2, status: 'failed' })
    expect(next.data.map((d) => d.id)).toEqual([records[0]!.id])
    expect(next.has_more).toBe(false)
    // the event id lookup still applies the status to its one row
    const byEvent = await listDeliveryLog(deps, t.account.id, t.integration.id, {
      cursor: undefined,
      limit: 20,
      eventId: records[5]!.event_id,
      status: 'failed',
    })
    expect(byEvent.data).toEqual([])
  })

  it('recover reads only the failed records; its progress is counted, not read', async () => {
    const { t, records } = await tenantWith([
      { status: 'failed', seconds: 1 },
      ...Array.from({ length: 200 }, (_, n) => ({ status: 'succeeded' as const, seconds: 2 + n })),
      { status: 'failed', seconds: 500 },
      { status: 'retrying', seconds: 501 },
    ])
    const spy = counting()
    const plan = await planRecover(spy.deps, t.account.id, t.integration.id, at(0))
    // mutation: planRecover listing without `status: 'failed'` reads all 203 (and keeps the others as failed)
    expect(plan).toEqual({ failed: [records[0], records[201]], complete: true })
    expect(spy.read()).toBe(2)
    const counts = await statusCountsSince(spy.deps, t.account.id, t.integration.id, at(1.5))
    expect(counts).toEqual({ pending: 0, retrying: 1, succeeded: 200, failed: 1, complete: true })
    expect(spy.read()).toBe(2)
  })

  it(`recover keeps the newest ${RECOVER_MAX_DELIVERIES} failed, reading one more only to say there are more`, async () => {
    const { t, records } = await tenantWith(Array.from({ length: RECOVER_MAX_DELIVERIES + 2 }, (_, n) => ({ status: 'failed' as const, seconds: n })))
    const spy = counting()
    const plan = await planRecover(spy.deps, t.account.id, t.integration.id, at(0))
    expect(plan.complete).toBe(false)
    // the newest ones, oldest first: rows 2…1001 (mutation: slicing the other end keeps row 1)
    expect(plan.failed.map((d) => d.id)).toEqual(records.slice(2).map((d) => d.id))
    // mutation: reading full pages past the maximum reads 1,002 or more
    expect(spy.read()).toBe(RECOVER_MAX_DELIVERIES + 1)
    // exactly the maximum since a later time: all of them, complete
    const exact = await planRecover(deps, t.account.id, t.integration.id, at(2))
    expect(exact).toMatchObject({ complete: true })
    expect(exact.failed).toHaveLength(RECOVER_MAX_DELIVERIES)
  })
})
