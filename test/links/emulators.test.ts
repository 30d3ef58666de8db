import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AccountRecord } from '@lsv/shared/model/records.ts'
import { mintContactLink } from '@lsv/shared/domain/links/mint.ts'
import { resolveLinkToken } from '@lsv/shared/domain/links/resolve.ts'
import { consumeLinkMintQuota } from '@lsv/shared/domain/links/rate-limit.ts'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { isAppError } from '@lsv/shared/errors/app-error.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { seedContact } from './fixtures.ts'

/** The same mint and resolution on the Firestore-backed contact store and rate limiter. */
describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('links on the emulators', () => {
  const clock = new ManualClock(Date.UTC(2026, 8, 4, 12, 0, 0))
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let tenant: StoredTenant
  let account: AccountRecord
  let contactId: string

  beforeAll(async () => {
    deps = await createTestDeps({ backend: 'emulators', clock })
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

  it('mints an opaque token stored as a hash and resolves it', async () => {
    const minted = await mintContactLink(deps, account, { destinationUrl: 'https://example.com/x?y=1', source: 'crm', externalId: 'ext-1' })
    expect(minted.contactId).toBe(contactId)
    expect(await resolveLinkToken(deps, minted.token, { accountId: account.id })).toEqual({ accountId: account.id, contactId })
    expect(await resolveLinkToken(deps, minted.token, { accountId: 'another' })).toBeNull()
    expect(await resolveLinkToken(deps, `a.${'B'.repeat(43)}`)).toBeNull()
  })

  it('counts 120 mints per minute per account', async () => {
    clock.set(Date.UTC(2026, 8, 4, 13, 0, 0))
    for (let i = 0; i < 120; i++) await consumeLinkMintQuota(deps, account.id)
    const err = await consumeLinkMintQuota(deps, account.id).catch((e: unknown) => e)
    expect(isAppError(err) && err.code === 'rate_limited' && err.headers['retry-after'] === '60').toBe(true)
    clock.advance(60_000)
    await expect(consumeLinkMintQuota(deps, account.id)).resolves.toBeUndefined()
  })
})
