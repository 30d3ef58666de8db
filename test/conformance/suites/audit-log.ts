import { afterAll, beforeAll, expect, it } from 'vitest'
import type { AuditEntry, AuditLogStore } from '@lsv/shared/ports/audit-log.ts'
import { auditEntryId } from '@lsv/shared/domain/audit/record.ts'
import { randomSuffix } from '../../helpers/embedded.ts'

/** Two stores over one backend, as two portal-api instances would be. */
export interface AuditLogHarness {
  store: AuditLogStore
  other: AuditLogStore
  close(): Promise<void>
}

const T0 = Date.UTC(2026, 8, 4, 12, 0, 0)

/** The behaviour every AuditLogStore adapter must share. Call inside a `describe`. */
export function auditLogConformance(open: () => Promise<AuditLogHarness>): void {
  let h: AuditLogHarness
  beforeAll(async () => {
    h = await open()
  })
  afterAll(async () => {
    await h.close()
  })

  const entry = (accountId: string, seconds: number, action = 'api_key.create'): AuditEntry => ({
    id: auditEntryId(T0 + seconds * 1000),
    account_id: accountId,
    at: new Date(T0 + seconds * 1000).toISOString(),
    actor: 'portal session 0123456789ab',
    action,
    target: { connection_id: 'src_x', key_id: `key_${seconds}` },
    details: { scopes: ['contacts:write'], grace_seconds: 3600, replaced: null, active: true },
  })

  it('reads back what was appended, field for field, from either instance', async () => {
    const account = `acc-${randomSuffix()}`
    const e = entry(account, 1)
    await h.store.append(e)
    expect(await h.other.list(account, { limit: 10 })).toEqual({ data: [e], next_before: null, newer_after: null })
  })

  it('lists newest first, with keyset pages that neither skip nor repeat, whichever instance wrote', async () => {
    const account = `acc-${randomSuffix()}`
    const written: AuditEntry[] = []
    // written out of order, half on each instance
    for (const s of [5, 1, 4, 2, 3, 7, 6]) {
      const e = entry(account, s)
      written.push(e)
      await (s % 2 ? h.store : h.other).append(e)
    }
    const expected = [...written].sort((a, b) => (a.id < b.id ? 1 : -1))
    const seen: AuditEntry[] = []
    let before: string | undefined
    for (let page = 0; page < 10; page++) {
      const got = await h.store.list(account, before === undefined ? { limit: 3 } : { before, limit: 3 })
      seen.push(...got.data)
      if (got.next_before === null) break
      expect(got.data).toHaveLength(3)
      before = got.next_before
    }
    expect(seen).toEqual(expected)
    expect(seen.map((e) => e.target.key_id)).toEqual(['key_7', 'key_6', 'key_5', 'key_4', 'key_3', 'key_2', 'key_1'])
  })

  it('pages back (newer) from any page as exactly as it pages forward (older), and says where each direction ends', async () => {
    const account = `acc-${randomSuffix()}`
    for (const s of [5, 1, 4, 2, 3, 7, 6]) await (s % 2 ? h.store : h.other).append(entry(account, s))
    const keys = (p: { data: AuditEntry[] }) => p.data.map((e) => e.target.key_id)
    // forward: [7 6 5] [4 3 2] [1]
    const p1 = await h.store.list(account, { limit: 3 })
    expect(p1.newer_after).toBeNull() // mutation: the first page offering a newer page fails here
    const p2 = await h.other.list(account, { before: p1.next_before!, limit: 3 })
    const p3 = await h.store.list(account, { before: p2.next_before!, limit: 3 })
    expect([keys(p2), keys(p3)]).toEqual([['key_4', 'key_3', 'key_2'], ['key_1']])
    expect(p3.next_before).toBeNull()
    // back: from the last page to the one before it, and from there to the first, row for row
    // (mutation: reading `after` newest first instead of just above it returns [7 6 5] here)
    const back2 = await h.other.list(account, { after: p3.newer_after!, limit: 3 })
    expect(back2).toEqual(p2)
    const back1 = await h.store.list(account, { after: back2.newer_after!, limit: 3 })
    expect(back1).toEqual(p1)
    // a short newer page: only two entries lie above key_5
    const short = await h.store.list(account, { after: p1.data[2]!.id, limit: 3 })
    expect(keys(short)).toEqual(['key_7', 'key_6'])
    expect([short.newer_after, short.next_before]).toEqual([null, short.data[1]!.id])
  })

  it('a page that ends exactly at the last entry says there is no next page', async () => {
    const account = `acc-${randomSuffix()}`
    for (const s of [1, 2]) await h.store.append(entry(account, s))
    const got = await h.store.list(account, { limit: 2 })
    expect(got.data).toHaveLength(2)
    expect(got.next_before).toBeNull()
  })

  it('keeps accounts apart', async () => {
    const a = `acc-${randomSuffix()}`
    const b = `acc-${randomSuffix()}`
    await h.store.append(entry(a, 1, 'domains.set'))
    expect((await h.store.list(b, { limit: 10 })).data).toEqual([])
    expect((await h.other.list(a, { limit: 10 })).data.map((e) => e.action)).toEqual(['domains.set'])
  })

  it('refuses to write an id twice (entries are never rewritten)', async () => {
    const account = `acc-${randomSuffix()}`
    const e = entry(account, 1)
    await h.store.append(e)
    await expect(h.other.append({ ...e, action: 'rewritten' })).rejects.toThrow()
    expect((await h.store.list(account, { limit: 10 })).data).toEqual([e])
  })
}
