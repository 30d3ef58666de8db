import { afterAll, beforeAll, expect, it } from 'vitest'
import { createHash, randomBytes } from 'node:crypto'
import type { PortalAccessStore, PortalLinkRecord } from '@lsv/shared/ports/portal-access.ts'
import { randomSuffix } from '../../helpers/embedded.ts'

/**
 * Two stores over one backend (two Firestore clients, or two EmbeddedDb handles on one file), as
 * two instances of portal-api would be: single use must hold across them.
 */
export interface PortalAccessHarness {
  store: PortalAccessStore
  other: PortalAccessStore
  close(): Promise<void>
}

const T0 = Date.UTC(2026, 8, 4, 12, 0, 0)
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString()
const hash = () => createHash('sha256').update(randomBytes(32)).digest('hex')
const WEEK = 7 * 86_400

/** The behaviour every PortalAccessStore adapter must share. Call inside a `describe`. */
export function portalAccessConformance(open: () => Promise<PortalAccessHarness>): void {
  let h: PortalAccessHarness
  const accounts: string[] = []
  const account = () => {
    const id = `acc-${randomSuffix()}`
    accounts.push(id)
    return id
  }
  const link = async (accountId: string, overrides: Partial<PortalLinkRecord> = {}): Promise<PortalLinkRecord> => {
    const record: PortalLinkRecord = { token_hash: hash(), account_id: accountId, created_at: at(0), expires_at: at(900), used_at: null, ...overrides }
    await h.store.createLink(record)
    return record
  }
  const session = (seconds: number) => ({ hash: hash(), at: at(seconds), expires_at: at(seconds + WEEK) })

  beforeAll(async () => {
    h = await open()
  })
  afterAll(async () => {
    for (const id of accounts) await h.store.deleteAccountData(id)
    await h.close()
  })

  it('stores a link and reads it back by its hash, from either instance', async () => {
    const l = await link(account())
    expect(await h.store.getLink(l.token_hash)).toEqual(l)
    expect(await h.other.getLink(l.token_hash)).toEqual(l)
    expect(await h.store.getLink(hash())).toBeNull()
  })

  it('redeems a link once: a session of its account, the link marked used; a second redemption gets nothing', async () => {
    const a = account()
    const l = await link(a)
    const s = session(30)
    const started = await h.store.redeemLink(l.token_hash, s)
    expect(started).toEqual({ hash: s.hash, account_id: a, created_at: at(30), last_used_at: at(30), expires_at: at(30 + WEEK) })
    expect(await h.other.getSession(s.hash)).toEqual(started)
    expect(await h.store.getLink(l.token_hash)).toEqual({ ...l, used_at: at(30) })

    const again = session(31)
    expect(await h.other.redeemLink(l.token_hash, again)).toBeNull()
    expect(await h.store.redeemLink(l.token_hash, again)).toBeNull()
    expect(await h.store.getSession(again.hash)).toBeNull()
    expect(await h.store.getLink(l.token_hash)).toEqual({ ...l, used_at: at(30) })
  })

  it('redeems only strictly before expires_at; an unknown link is nothing', async () => {
    const a = account()
    const late = await link(a, { expires_at: at(60) })
    const s = session(60)
    expect(await h.store.redeemLink(late.token_hash, s)).toBeNull()
    expect(await h.store.getSession(s.hash)).toBeNull()
    expect((await h.store.getLink(late.token_hash))?.used_at ?? null).toBeNull()

    const inTime = await link(a, { expires_at: at(60) })
    expect(await h.store.redeemLink(inTime.token_hash, session(59))).not.toBeNull()
    expect(await h.store.redeemLink(hash(), session(1))).toBeNull()
  })

  it('under concurrent redemptions of one link (two instances), exactly one session is started', async () => {
    const a = account()
    for (let round = 0; round < 3; round++) {
      const l = await link(a)
      const attempts = Array.from({ length: 8 }, (_, i) => ({ s: session(10 + i), store: i % 2 === 0 ? h.store : h.other }))
      const results = await Promise.all(attempts.map(({ s, store }) => store.redeemLink(l.token_hash, s)))
      const won = results.filter((r) => r !== null)
      expect(won).toHaveLength(1)
      const stored = await Promise.all(attempts.map(({ s }) => h.store.getSession(s.hash)))
      expect(stored.filter((r) => r !== null)).toEqual(won)
      expect((await h.store.getLink(l.token_hash))?.used_at).toBe(won[0]!.created_at)
    }
  })

  it('touches a session (last_used_at only) and ignores a touch of a missing one', async () => {
    const l = await link(account())
    const s = session(5)
    const started = (await h.store.redeemLink(l.token_hash, s))!
    await h.other.touchSession(s.hash, at(600))
    expect(await h.store.getSession(s.hash)).toEqual({ ...started, last_used_at: at(600) })
    await expect(h.store.touchSession(hash(), at(600))).resolves.toBeUndefined()
    expect(await h.store.getSession(hash())).toBeNull()
  })

  it('deletes one session and nothing else; deleting a missing one is no error', async () => {
    const a = account()
    const [l1, l2] = [await link(a), await link(a)]
    const [s1, s2] = [session(1), session(2)]
    await h.store.redeemLink(l1.token_hash, s1)
    await h.store.redeemLink(l2.token_hash, s2)
    await h.other.deleteSession(s1.hash)
    expect(await h.store.getSession(s1.hash)).toBeNull()
    expect(await h.store.getSession(s2.hash)).not.toBeNull()
    await expect(h.store.deleteSession(s1.hash)).resolves.toBeUndefined()
  })

  it('ends every session of one account and voids its unused links; other accounts keep theirs', async () => {
    const a = account()
    const b = account()
    const sessions = []
    for (let i = 0; i < 3; i++) {
      const s = session(i)
      await h.store.redeemLink((await link(a)).token_hash, s)
      sessions.push(s)
    }
    const unused = await link(a)
    const used = await link(a)
    await h.store.redeemLink(used.token_hash, session(4))
    const bLink = await link(b)
    const bSession = session(5)
    await h.store.redeemLink((await link(b)).token_hash, bSession)

    await h.other.endAccountSessions(a)
    for (const s of sessions) expect(await h.store.getSession(s.hash)).toBeNull()
    expect(await h.store.redeemLink(unused.token_hash, session(6))).toBeNull()
    expect((await h.store.getLink(used.token_hash))?.used_at).toBe(at(4))
    expect(await h.store.getSession(bSession.hash)).not.toBeNull()
    expect(await h.store.redeemLink(bLink.token_hash, session(7))).not.toBeNull()
    // a link minted afterwards works
    expect(await h.store.redeemLink((await link(a)).token_hash, session(8))).not.toBeNull()
  })

  it('leaves no session of the account behind when redemptions race with ending its sessions', async () => {
    const a = account()
    const links = await Promise.all(Array.from({ length: 6 }, () => link(a)))
    const attempts = links.map((l, i) => ({ l, s: session(20 + i), store: i % 2 === 0 ? h.store : h.other }))
    await Promise.all([...attempts.map(({ l, s, store }) => store.redeemLink(l.token_hash, s)), h.other.endAccountSessions(a)])
    for (const { l, s } of attempts) {
      expect(await h.store.getSession(s.hash)).toBeNull()
      expect(await h.store.redeemLink(l.token_hash, session(40))).toBeNull()
    }
  })

  it('removes everything of an account (test clean-up)', async () => {
    const a = account()
    const l = await link(a)
    const s = session(1)
    await h.store.redeemLink((await link(a)).token_hash, s)
    await h.store.deleteAccountData(a)
    expect(await h.store.getLink(l.token_hash)).toBeNull()
    expect(await h.store.getSession(s.hash)).toBeNull()
  })
}
