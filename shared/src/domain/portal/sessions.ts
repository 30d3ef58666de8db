import type { AccountRecord } from '../../model/records.ts'
import type { PortalSessionRecord } from '../../ports/portal-access.ts'
import type { PortalDeps } from './deps.ts'
import { SESSION_IDLE_MS, SESSION_TOUCH_INTERVAL_MS } from '../../model/portal-lifetimes.ts'
import { hashPortalSecret, PORTAL_SECRET_PATTERN } from './secrets.ts'

/** A signed-in caller: the session and the one account it sees. */
export interface PortalSession {
  account: AccountRecord
  session: PortalSessionRecord
}

/**
 * The live session a cookie value names, or null (management-api.md, "Portal access", rule 3):
 * unknown or malformed values, sessions 12 hours idle or 7 days old, and sessions whose account
 * is gone or inactive are no session. A session found ended is removed; one of an inactive
 * account ends with every other session of that account, so reactivating it revives none.
 * `last_used_at` is written when the last write is a minute old or more (lifetimes.ts).
 */
export async function resolvePortalSession(deps: PortalDeps, secret: string | null): Promise<PortalSession | null> {
  if (secret === null || !PORTAL_SECRET_PATTERN.test(secret)) return null
  const hash = hashPortalSecret(secret)
  const session = await deps.portalAccess.getSession(hash)
  if (!session) return null
  const now = deps.clock.now()
  const lastUsed = Date.parse(session.last_used_at)
  if (now >= Date.parse(session.expires_at) || now - lastUsed >= SESSION_IDLE_MS) {
    await deps.portalAccess.deleteSession(hash)
    return null
  }
  const account = await deps.tenants.getAccount(session.account_id)
  if (!account || !account.active) {
    await deps.portalAccess.endAccountSessions(session.account_id)
    return null
  }
  if (now - lastUsed >= SESSION_TOUCH_INTERVAL_MS) {
    const at = new Date(now).toISOString()
    await deps.portalAccess.touchSession(hash, at)
    return { account, session: { ...session, last_used_at: at } }
  }
  return { account, session }
}

/** Sign-out: ends the session the cookie value names (if any). */
export async function endPortalSession(deps: Pick<PortalDeps, 'portalAccess'>, secret: string | null): Promise<void> {
  if (secret === null || !PORTAL_SECRET_PATTERN.test(secret)) return
  await deps.portalAccess.deleteSession(hashPortalSecret(secret))
}

/**
 * `DELETE /api/v1/admin/accounts/{accountId}/portal-sessions`, and account deactivation: every
 * session of the account ends at once, and links minted before can no longer start one.
 */
export async function endAccountPortalSessions(deps: Pick<PortalDeps, 'portalAccess'>, accountId: string): Promise<void> {
  await deps.portalAccess.endAccountSessions(accountId)
}
