import { afterAll, beforeAll, expect, it } from 'vitest'
import type { PushLog, PushLogEntry } from '@lsv/shared/ports/push-log.ts'
import { pushLogEntryId } from '@lsv/shared/domain/activity/push-log.ts'
import { randomSuffix } from '../../helpers/embedded.ts'

/** Two logs over one backend, as two edge instances and a portal-api instance would be. */
export interface PushLogHarness {
  store: PushLog
  other: PushLog
  close(): Promise<void>
}

const T0 = Date.UTC(2026, 8, 4, 12, 0, 0)
const DAY = 86_400_000
/** the same bound for both kinds */
const both = (n: number) => ({ accepted: n, refused: n })

/** The behaviour every PushLog adapter must share. Call inside a `describe`. */
export function pushLogConformance(open: () => Promise<PushLogHarness>): void {
  let h: PushLogHarness
  beforeAll(async () => {
    h = await open()
  })
  afterAll(async () => {
    await h.close()
  })

  const entry = (connectionId: string, seconds: number, status = 202): PushLogEntry => ({
    id: pushLogEntryId(T0 + seconds * 1000),
    connection_id: connectionId,
    account_id: 'acc_1',
    at: new Date(T0 + seconds * 1000).toISOString(),
    status,
    error: status === 202 ? null : 'unauthorized',
    accepted: status === 202 ? 3 : null,
    keys: ['email', 'plan'],
    request_id: `req-${seconds}`,
    trace: 'projects/p/traces/0af7651916cd43dd8448eb211c80319c',
    credential: { kind: 'api_key', id: 'key_1', label: 'CRM sync (lsk_ab12…)' },
    expire_at_ms: T0 + seconds * 1000 + 7 * DAY,
  })

  it('reads back what was appended, field for field, newest first, from the other instance', async () => {
    const c = `src_${randomSuffix()}`
    const written = [entry(c, 1), entry(c, 3, 401), entry(c, 2, 413)]
    await h.store.append(written, both(100), T0)
    // mutation: ordering ascending (or by status) fails this
    expect(await h.other.recent(c, both(10), T0)).toEqual([written[1], written[2], written[0]])
  })

  it('keeps only the newest `keep` entries of a connection, whichever instance wrote them', async () => {
    const c = `src_${randomSuffix()}`
    const neighbour = `src_${randomSuffix()}`
    await h.store.append([entry(neighbour, 1)], both(3), T0)
    for (const s of [1, 2, 3, 4]) await (s % 2 ? h.store : h.other).append([entry(c, s)], both(3), T0)
    await h.store.append([entry(c, 5), entry(c, 6)], both(3), T0)
    const left = await h.other.recent(c, both(10), T0)
    // mutation: skipping the trim (or trimming the newest) fails this
    expect(left.map((e) => e.request_id)).toEqual(['req-6', 'req-5', 'req-4'])
    // another connection's entries are not counted against it
    expect(await h.store.recent(neighbour, both(10), T0)).toHaveLength(1)
  })

  it('keeps refused entries apart: 500 refused after 10 accepted leave the 10 accepted readable, from the other instance', async () => {
    const c = `src_${randomSuffix()}`
    const accepted = Array.from({ length: 10 }, (_, i) => entry(c, i + 1))
    await h.store.append(accepted, { accepted: 100, refused: 100 }, T0)
    // a flood of refusals (a wrong token sent to a known source id), over several appends and both instances
    for (let round = 0; round < 5; round++) {
      const refused = Array.from({ length: 100 }, (_, i) => entry(c, 100 + round * 100 + i, [401, 403, 404, 413, 429][i % 5]!))
      await (round % 2 ? h.other : h.store).append(refused, { accepted: 100, refused: 100 }, T0)
    }
    const read = await h.other.recent(c, { accepted: 100, refused: 100 }, T0)
    // mutation: one slice for both kinds (the refusals trim the accepted entries) fails this
    expect(read.filter((e) => e.status === 202).map((e) => e.request_id)).toEqual(accepted.map((e) => e.request_id).reverse())
    // the refused slice keeps its own newest `keep`, newest first, ahead of the older accepted ones
    const refused = read.filter((e) => e.status !== 202)
    expect(refused).toHaveLength(100)
    expect(refused[0]!.request_id).toBe('req-599')
    expect(read.slice(0, 100)).toEqual(refused)
    // each kind has its own read limit too
    // mutation: a read that takes the newest `limit` of both kinds together fails this
    const few = await h.store.recent(c, { accepted: 3, refused: 2 }, T0)
    expect(few.map((e) => e.request_id)).toEqual(['req-599', 'req-598', 'req-10', 'req-9', 'req-8'])
  })

  it('answers at most `limit`, and nothing expired at the time read', async () => {
    const c = `src_${randomSuffix()}`
    await h.store.append([entry(c, 1), entry(c, 2), entry(c, 3)], both(100), T0)
    expect((await h.other.recent(c, both(2), T0)).map((e) => e.request_id)).toEqual(['req-3', 'req-2'])
    // 7 days and 2 s later: the first two have expired
    // mutation: ignoring expire_at_ms on read fails this
    expect((await h.other.recent(c, both(10), T0 + 7 * DAY + 2_500)).map((e) => e.request_id)).toEqual(['req-3'])
    expect(await h.other.recent(`src_${randomSuffix()}`, both(10), T0)).toEqual([])
  })

  it("joins the worker's outcome to its push by request id, whichever arrives first, on that connection only", async () => {
    const c = `src_${randomSuffix()}`
    const outcome = {
      stored: 2,
      refused_count: 1,
      refused: [{ index: 1, external_id: 'r-1', field: 'email', value: 'nope', reason: 'not an email address' }],
      at: new Date(T0 + 5_000).toISOString(),
    }
    // the outcome before the entry (the worker may beat the edge's flush), then the entry
    await h.store.recordOutcome(c, 'req-2', outcome, T0 + 7 * DAY)
    await h.other.append([entry(c, 1), entry(c, 2)], both(100), T0)
    // a redelivered batch writes the same outcome again: still one
    await h.other.recordOutcome(c, 'req-2', outcome, T0 + 7 * DAY)
    // the same request id under another connection is not this push's
    await h.store.recordOutcome(`src_${randomSuffix()}`, 'req-1', outcome, T0 + 7 * DAY)
    const [second, first] = await h.store.recent(c, both(10), T0)
    // mutation: a recent() that does not join outcomes fails this
    expect(second).toEqual({ ...entry(c, 2), id: second!.id, outcome })
    expect(first!.outcome).toBeUndefined()
    // an expired outcome is not joined
    await h.store.recordOutcome(c, 'req-1', outcome, T0 + 1_000)
    expect((await h.other.recent(c, both(10), T0 + 2_000)).find((e) => e.request_id === 'req-1')?.outcome).toBeUndefined()
  })
}
