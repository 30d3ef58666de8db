import { afterAll, beforeAll, expect, it } from 'vitest'
import { createHash, randomBytes } from 'node:crypto'
import type { PortalAccessStore, PortalRevealRecord } from '@lsv/shared/ports/portal-access.ts'
import { randomSuffix } from '../../helpers/embedded.ts'
import type { TwoInstances } from './two-instances.ts'

const T0 = Date.UTC(2026, 8, 4, 12, 0, 0)
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString()
const hash = () => createHash('sha256').update(randomBytes(32)).digest('hex')

/**
 * The one-time reveals of PortalAccessStore (a secret shown once after a portal form; domain/
 * portal/reveals.ts), over two instances sharing one backend: once means once across instances,
 * and only the session that stored one can take it. Call inside a `describe`.
 *
 * Mutations that fail it: takeReveal reading without deleting (the second take gets it again);
 * takeReveal not checking the session (another session's take gets it, or deletes it); a take
 * that is not atomic (two concurrent takes both get it: the race below, across instances);
 * endAccountSessions or deleteAccountData leaving reveals behind.
 */
export function portalRevealsConformance(open: () => Promise<TwoInstances<PortalAccessStore>>): void {
  let h: TwoInstances<PortalAccessStore>
  const accounts: string[] = []
  const account = () => {
    const id = `acc-${randomSuffix()}`
    accounts.push(id)
    return id
  }
  const reveal = async (accountId: string, overrides: Partial<PortalRevealRecord> = {}): Promise<PortalRevealRecord> => {
    const record: PortalRevealRecord = {
      id: randomBytes(16).toString('base64url'),
      session_hash: hash(),
      account_id: accountId,
      created_at: at(0),
      expires_at: at(600),
      sealed: `v1.${randomBytes(8).toString('base64url')}`,
      ...overrides,
    }
    await h.store.putReveal(record)
    return record
  }

  beforeAll(async () => {
    h = await open()
  })
  afterAll(async () => {
    for (const id of accounts) await h.store.deleteAccountData(id)
    await h.close()
  })

  it('a reveal is taken once, from either instance, as it was stored', async () => {
    const r = await reveal(account())
    expect(await h.other.takeReveal(r.id, r.session_hash)).toEqual(r)
    expect(await h.store.takeReveal(r.id, r.session_hash)).toBeNull()
    expect(await h.other.takeReveal(r.id, r.session_hash)).toBeNull()
  })

  it("another session's take gets nothing and leaves it for its own session", async () => {
    const r = await reveal(account())
    expect(await h.store.takeReveal(r.id, hash())).toBeNull()
    expect(await h.other.takeReveal(r.id, r.session_hash)).toEqual(r)
  })

  it('an unknown id is nothing', async () => {
    expect(await h.store.takeReveal(randomBytes(16).toString('base64url'), hash())).toBeNull()
  })

  it('of concurrent takes on two instances, exactly one gets it', async () => {
    const a = account()
    for (let round = 0; round < 5; round++) {
      const r = await reveal(a)
      const got = await Promise.all([0, 1, 2, 3].map((i) => (i % 2 ? h.other : h.store).takeReveal(r.id, r.session_hash)))
      expect(got.filter((g) => g !== null)).toEqual([r])
    }
  })

  it("ending the account's sessions, and deleting its data, removes its reveals (and no other account's)", async () => {
    const a = account()
    const b = account()
    const mine = await reveal(a)
    const theirs = await reveal(b)
    await h.store.endAccountSessions(a)
    expect(await h.other.takeReveal(mine.id, mine.session_hash)).toBeNull()
    const again = await reveal(b)
    await h.other.deleteAccountData(b)
    expect(await h.store.takeReveal(again.id, again.session_hash)).toBeNull()
    expect(await h.store.takeReveal(theirs.id, theirs.session_hash)).toBeNull()
    const kept = await reveal(a)
    await h.store.deleteAccountData(b)
    expect(await h.store.takeReveal(kept.id, kept.session_hash)).toEqual(kept)
  })
}
