import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto'
import { decodeProtectedHeader } from 'jose'
import { storeReveal, takeReveal, type RevealView } from '@lsv/shared/domain/portal/reveals.ts'
import type { PortalSession } from '@lsv/shared/domain/portal/sessions.ts'
import { hashPortalSecret, newPortalSecret } from '@lsv/shared/domain/portal/secrets.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

/**
 * A reveal (the secret a portal form shows once) is stored as a compact JWE (`dir`, A256GCM,
 * jose's CompactEncrypt) under a key derived from the session's cookie value; reveals sealed in
 * the earlier `v1.` form stay readable for their 10 minutes across the deploy.
 */
describe('sealed reveals', () => {
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let tenant: StoredTenant
  const view: RevealView = {
    title: 'API key created',
    label: 'New API key',
    secret: `lsk_${randomBytes(24).toString('base64url')}`,
    note: 'shown once',
    back: { path: '/portal/connections', text: 'Back' },
  }

  beforeAll(async () => {
    deps = await createTestDeps()
    tenant = await createTestTenant(deps, ACCOUNT_ONLY)
  })
  afterAll(async () => {
    await tenant?.cleanup()
    await deps?.cleanup()
  })

  function session(cookie: string): PortalSession {
    const now = new Date(deps.clock.now()).toISOString()
    return {
      account: tenant.account,
      session: { hash: hashPortalSecret(cookie), account_id: tenant.account.id, created_at: now, last_used_at: now, expires_at: now },
    }
  }

  it('is a compact JWE (dir, A256GCM) without the secret in clear, opened once by its own cookie value', async () => {
    const cookie = newPortalSecret()
    const id = await storeReveal(deps, cookie, session(cookie), view)
    // read the stored record without taking it: put it back for the take below
    const stored = (await deps.portalAccess.takeReveal(id, hashPortalSecret(cookie)))!
    await deps.portalAccess.putReveal(stored)
    expect(stored.sealed.split('.')).toHaveLength(5)
    expect(decodeProtectedHeader(stored.sealed)).toEqual({ alg: 'dir', enc: 'A256GCM' })
    expect(stored.sealed).not.toContain(view.secret)
    expect(Buffer.from(stored.sealed.split('.')[3]!, 'base64url').toString('latin1')).not.toContain(view.secret)
    expect(await takeReveal(deps, cookie, session(cookie), id)).toEqual(view)
    expect(await takeReveal(deps, cookie, session(cookie), id)).toBeNull()
  })

  it('is not opened with another cookie value, even under the right session hash', async () => {
    const cookie = newPortalSecret()
    const id = await storeReveal(deps, cookie, session(cookie), view)
    expect(await takeReveal(deps, newPortalSecret(), session(cookie), id)).toBeNull()
  })

  it('a reveal sealed in the earlier v1 form (AES-256-GCM, HKDF "portal reveal v1") is still shown', async () => {
    const cookie = newPortalSecret()
    const id = randomBytes(16).toString('base64url')
    const key = Buffer.from(hkdfSync('sha256', Buffer.from(cookie, 'utf8'), Buffer.from(id, 'utf8'), 'portal reveal v1', 32))
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', key, iv)
    const body = Buffer.concat([cipher.update(JSON.stringify(view), 'utf8'), cipher.final()])
    const sealed = `v1.${iv.toString('base64url')}.${body.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`
    const now = deps.clock.now()
    await deps.portalAccess.putReveal({
      id,
      session_hash: hashPortalSecret(cookie),
      account_id: tenant.account.id,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + 600_000).toISOString(),
      sealed,
    })
    expect(await takeReveal(deps, cookie, session(cookie), id)).toEqual(view)
  })
})
