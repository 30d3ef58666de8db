import { createHash } from 'node:crypto'
import type { AccountRecord, ApiKeyRecord, ConnectionRecord, Scope } from '../../model/records.ts'
import type { PlatformDeps } from '../../ports/deps.ts'
import { AppError } from '../../errors/app-error.ts'
import { getKeyPepper, getOperatorToken } from '../secrets/platform-secrets.ts'
import { hashSecret, safeEqual } from './hashing.ts'

type Headers = Record<string, string | string[] | undefined>
/** keys are checked against the cached lookups (revocation bound: ports/tenant-lookups.ts) */
type AuthDeps = Pick<PlatformDeps, 'config' | 'secrets' | 'tenantLookups' | 'clock'>

export interface ApiKeyAuth {
  account: AccountRecord
  connection: ConnectionRecord
  key: ApiKeyRecord
}

const API_KEY_PATTERN = /^lsk_[A-Za-z0-9_-]{43}$/

function single(value: string | string[] | undefined): string | undefined {
  // a repeated header is ambiguous: treat it as malformed rather than pick one
  if (Array.isArray(value)) return value.length === 1 ? value[0] : '\u0000'
  return value
}

/**
 * The presented API key, or null when the request does not present exactly one well-formed
 * key (contract section 5, rules 1 and 2: both forms, none, blank or malformed all answer 401).
 */
export function presentedApiKey(headers: Headers): string | null {
  const authorization = single(headers.authorization)
  const xApiKey = single(headers['x-api-key'])
  if (authorization !== undefined && xApiKey !== undefined) return null
  let key: string | undefined
  if (authorization !== undefined) {
    const match = /^Bearer +(\S+) *$/i.exec(authorization)
    key = match?.[1]
  } else {
    key = xApiKey?.trim()
  }
  if (!key || !API_KEY_PATTERN.test(key)) return null
  return key
}

/** A key record is usable at `nowMs` when neither its expiry nor its revocation has passed. */
export function isKeyUsable(key: ApiKeyRecord, nowMs: number): boolean {
  if (key.expires_at !== null && Date.parse(key.expires_at) <= nowMs) return false
  if (key.revoked_at !== null && Date.parse(key.revoked_at) <= nowMs) return false
  return true
}

/**
 * Authenticates a tenant API key (`Authorization: Bearer` or `x-api-key`, exactly one) and checks
 * its scope. Every failure of identity (missing, malformed, unknown, expired, revoked past its
 * grace, a key of another account than `account`, an inactive account or connection) is the
 * same 401 `unauthorized`; a valid key without the scope, or an account without the API-access
 * plan feature, is 403 `forbidden`. `account`: the tenant the caller already resolved (the edge's
 * subdomain) — the key must belong to it, and it is not read again.
 */
export async function authenticateApiKey(deps: AuthDeps, headers: Headers, options: { scope: Scope; account?: AccountRecord }): Promise<ApiKeyAuth> {
  const presented = presentedApiKey(headers)
  if (presented === null) throw new AppError('unauthorized')
  const pepper = await getKeyPepper(deps)
  const key = await deps.tenantLookups.getApiKeyByHash(hashSecret(pepper, presented))
  const now = deps.clock.now()
  if (!key || !isKeyUsable(key, now)) throw new AppError('unauthorized')
  if (options.account !== undefined && key.account_id !== options.account.id) throw new AppError('unauthorized')
  const [account, connection] = await Promise.all([
    options.account ?? deps.tenantLookups.getAccount(key.account_id),
    deps.tenantLookups.getConnection(key.connection_id),
  ])
  if (!account || !account.active || !connection || !connection.active || connection.type !== 'api') {
    throw new AppError('unauthorized')
  }
  if (!account.api_access || !key.scopes.includes(options.scope)) throw new AppError('forbidden')
  return { account, connection, key }
}

function digest(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex')
}

/**
 * The management API's operator token (`Authorization: Bearer <token>`), compared in constant
 * time (both sides hashed first, so lengths do not leak either).
 */
export async function authenticateOperator(deps: Pick<PlatformDeps, 'config' | 'secrets'>, authorization: string | string[] | undefined): Promise<void> {
  const header = single(authorization)
  const match = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header)
  const expected = await getOperatorToken(deps)
  const presented = match?.[1] ?? ''
  const equal = safeEqual(digest(presented), digest(expected))
  if (!match || !equal) throw new AppError('unauthorized')
}
