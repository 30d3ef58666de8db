import { afterAll, beforeAll, expect, it } from 'vitest'
import type { LinkTokenRecord } from '@lsv/shared/model/records.ts'
import { contactIdFor } from '@lsv/shared/model/ids.ts'
import type { LinkTokenStore } from '@lsv/shared/ports/link-tokens.ts'
import { randomSuffix } from '../../helpers/embedded.ts'
import type { TwoInstances } from './two-instances.ts'

const T0 = '2026-01-01T00:00:00.000Z'

/** The behaviour every LinkTokenStore adapter must share. Call inside a `describe`. */
export function linkTokenStoreConformance(open: () => Promise<TwoInstances<LinkTokenStore>>): void {
  let harness: TwoInstances<LinkTokenStore>
  let store: LinkTokenStore
  const accounts: string[] = []
  const newAccount = () => {
    const id = `acc-${randomSuffix()}`
    accounts.push(id)
    return id
  }
  const token = (acc: string, hash = randomSuffix(32)): LinkTokenRecord => ({
    hash,
    account_id: acc,
    contact_id: contactIdFor(acc, 'crm', 'e1'),
    created_at: T0,
  })

  beforeAll(async () => {
    harness = await open()
    store = harness.store
  })
  afterAll(async () => {
    for (const id of accounts) await store.deleteAccountData(id)
    await harness.close()
  })

  it('stores and reads link tokens by hash', async () => {
    const t = token(newAccount())
    await store.put(t)
    expect(await store.get(t.hash)).toEqual(t)
    expect(await store.get(randomSuffix(32))).toBeNull()
  })

  it('a token minted on one instance resolves on the other (portal-api mints, any instance resolves)', async () => {
    const t = token(newAccount())
    await harness.store.put(t)
    expect(await harness.other.get(t.hash)).toEqual(t)
  })

  it('deletes the link tokens of one account only', async () => {
    const a = newAccount()
    const b = newAccount()
    await store.put(token(a, `${a}-tok`))
    await store.put(token(b, `${b}-tok`))
    await store.deleteAccountData(a)
    expect(await store.get(`${a}-tok`)).toBeNull()
    expect(await store.get(`${b}-tok`)).toEqual(token(b, `${b}-tok`))
  })
}
