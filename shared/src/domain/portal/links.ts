import { AppError } from '../../errors/app-error.ts'
import type { AccountRecord } from '../../model/records.ts'
import type { PortalSessionRecord } from '../../ports/portal-access.ts'
import type { PortalDeps } from './deps.ts'
import { LINK_TTL_DEFAULT_SECONDS, SESSION_ABSOLUTE_MS } from '../../model/portal-lifetimes.ts'
import { hashPortalSecret, newPortalSecret, PORTAL_SECRET_PATTERN } from './secrets.ts'

/** Where a sign-in link points: the token travels in `token`, a query name every log line redacts. */
export const SIGN_IN_PATH = '/portal/sign-in'

export interface MintedPortalLink {
  /** absolute, on the portal origin */
  url: string
  expires_at: string
}

/**
 * `POST /api/v1/admin/accounts/{accountId}/portal-links`: a single-use sign-in link for the
 * account, valid `ttlSeconds` (the schema bounds it to 60..3600). Only the token's hash is
 * stored; the token exists in the answer and nowhere else. 404 for an unknown account; 409
 * `conflict` for an inactive one (a link that could never start a session).
 */
export async function mintPortalLink(deps: PortalDeps, accountId: string, ttlSeconds = LINK_TTL_DEFAULT_SECONDS): Promise<MintedPortalLink> {
  const account = await deps.tenants.getAccount(accountId)
  if (!account) throw new AppError('not_found')
  if (!account.active) throw new AppError('conflict')
  const token = newPortalSecret()
  const now = deps.clock.now()
  const expiresAt = new Date(now + ttlSeconds * 1000).toISOString()
  await deps.portalAccess.createLink({
    token_hash: hashPortalSecret(token),
    account_id: account.id,
    created_at: new Date(now).toISOString(),
    expires_at: expiresAt,
    used_at: null,
  })
  // base64url needs no escaping in a query
  return { url: `${deps.config.portalBaseUrl.replace(/\/+$/, '')}${SIGN_IN_PATH}?token=${token}`, expires_at: expiresAt }
}

export interface StartedSession {
  /** the cookie value: the session's secret, sent once in Set-Cookie */
  secret: string
  session: PortalSessionRecord
  account: AccountRecord
}

/**
 * Follows a sign-in link: the first time, before it expires, and while its account is active, it
 * starts a session of that account. Anything else (unknown, malformed, used, expired, voided by
 * the operator, inactive account) is null and writes nothing; the caller cannot tell which, and
 * neither can whoever holds the link.
 */
export async function redeemPortalLink(deps: PortalDeps, token: string | undefined): Promise<StartedSession | null> {
  if (token === undefined || !PORTAL_SECRET_PATTERN.test(token)) return null
  const tokenHash = hashPortalSecret(token)
  const link = await deps.portalAccess.getLink(tokenHash)
  if (!link) return null
  const account = await deps.tenants.getAccount(link.account_id)
  if (!account || !account.active) return null
  const secret = newPortalSecret()
  const now = deps.clock.now()
  // the store re-checks use and expiry atomically: this is where single use is decided
  const session = await deps.portalAccess.redeemLink(tokenHash, {
    hash: hashPortalSecret(secret),
    at: new Date(now).toISOString(),
    expires_at: new Date(now + SESSION_ABSOLUTE_MS).toISOString(),
  })
  return session ? { secret, session, account } : null
}

/**
 * The account a sign-in link would start a session of, if followed now, or null (the same cases
 * as `redeemPortalLink`). Reads only: showing the "switch account?" page to a browser that is
 * already signed in must not use up the link (rule 2 counts a follow, not a look).
 */
export async function previewPortalLink(deps: PortalDeps, token: string | undefined): Promise<AccountRecord | null> {
  if (token === undefined || !PORTAL_SECRET_PATTERN.test(token)) return null
  const link = await deps.portalAccess.getLink(hashPortalSecret(token))
  if (!link || link.used_at !== null || deps.clock.now() >= Date.parse(link.expires_at)) return null
  const account = await deps.tenants.getAccount(link.account_id)
  return account?.active ? account : null
}
