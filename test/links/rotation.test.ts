import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import type { AccountRecord } from '@lsv/shared/model/records.ts'
import { mintContactLink } from '@lsv/shared/domain/links/mint.ts'
import { resolveLinkToken } from '@lsv/shared/domain/links/resolve.ts'
import { forgetCachedSigningKeys, LINK_SIGNING_KEYS_SECRET, rotateLinkSigningKey, type LinkSigningKeySet } from '@lsv/shared/domain/links/signing-keys.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { seedContact } from './fixtures.ts'

const clock = new ManualClock()
let deps: Awaited<ReturnType<typeof createTestDeps>>
let tenant: StoredTenant
let account: AccountRecord
let contactId: string

async function mintSigned(expSeconds?: number): Promise<string> {
  const minted = await mintContactLink(deps, account, { destinationUrl: 'https://example.com/', contactId, type: 'signed', expSeconds })
  return minted.token
}

const kidOf = (token: string) => token.split('.')[1]!

beforeAll(async () => {
  deps = await createTestDeps({ clock })
  tenant = await createTestTenant(deps, { ...ACCOUNT_ONLY, authorizedDomains: ['example.com'] })
  account = tenant.account
  contactId = await seedContact(deps, account.id, 'crm', 'ext-1')
})

afterAll(async () => {
  if (deps) {
    await tenant?.cleanup()
    await deps.cleanup()
  }
})

describe('link signing keys', () => {
  it('are created on first use on the embedded backend, as a JSON key set', async () => {
    expect(await deps.secrets.get(LINK_SIGNING_KEYS_SECRET)).toBeNull()
    const token = await mintSigned()
    const set = JSON.parse((await deps.secrets.get(LINK_SIGNING_KEYS_SECRET))!) as LinkSigningKeySet
    expect(set.current).toBe(kidOf(token))
    expect(Buffer.from(set.keys[set.current]!, 'base64')).toHaveLength(32)
  })

  it('rotation signs with the new key and keeps verifying tokens of the previous one', async () => {
    const before = await mintSigned()
    const newKid = await rotateLinkSigningKey(deps)
    expect(newKid).not.toBe(kidOf(before))
    const after = await mintSigned()
    expect(kidOf(after)).toBe(newKid)
    const expected = { accountId: account.id, contactId }
    expect(await resolveLinkToken(deps, before)).toEqual(expected)
    expect(await resolveLinkToken(deps, after)).toEqual(expected)

    // a process that cached the old set learns the new key on a miss
    forgetCachedSigningKeys(deps)
    expect(await resolveLinkToken(deps, after)).toEqual(expected)
  })

  it('a retired key no longer verifies (its tokens resolve to null); a token with a key id never issued neither', async () => {
    const old = await mintSigned()
    await rotateLinkSigningKey(deps)
    const set = JSON.parse((await deps.secrets.get(LINK_SIGNING_KEYS_SECRET))!) as LinkSigningKeySet
    delete set.keys[kidOf(old)]
    await deps.secrets.addVersion(LINK_SIGNING_KEYS_SECRET, JSON.stringify(set))
    forgetCachedSigningKeys(deps)
    expect(await resolveLinkToken(deps, old)).toBeNull()

    const current = await mintSigned()
    const parts = current.split('.')
    parts[1] = 'neverissued'
    expect(await resolveLinkToken(deps, parts.join('.'))).toBeNull()
  })

  it('expiry follows the injected clock', async () => {
    const token = await mintSigned(60)
    expect(await resolveLinkToken(deps, token)).not.toBeNull()
    clock.advance(60_000)
    expect(await resolveLinkToken(deps, token)).toBeNull()
  })

  it('a token of another account resolves to null when the account is given', async () => {
    const token = await mintSigned()
    expect(await resolveLinkToken(deps, token, { accountId: 'someone-else' })).toBeNull()
    expect(await resolveLinkToken(deps, token, { accountId: account.id })).toEqual({ accountId: account.id, contactId })
  })
})
