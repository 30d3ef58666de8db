import type { AccountRecord, ConnectionRecord, LocationRecord } from '../../model/records.ts'
import type { PlatformDeps } from '../../ports/deps.ts'
import { AppError } from '../../errors/app-error.ts'
import { presentedSourceToken, verifyLocationToken, verifySourceToken } from '../auth/verify-source-token.ts'
import { hashSecret, matchesHashedSecret } from '../auth/hashing.ts'
import { getKeyPepper } from '../secrets/platform-secrets.ts'

type Headers = Record<string, string | string[] | undefined>
/** credentials are checked against the cached lookups (revocation bound: ports/tenant-lookups.ts) */
type AuthDeps = Pick<PlatformDeps, 'config' | 'secrets' | 'tenantLookups' | 'clock' | 'logger'>

/** stands in for an unknown connection so the token check costs the same either way */
const NO_CONNECTION: ConnectionRecord = {
  id: '',
  account_id: '',
  type: 'webhook',
  source: '',
  name: null,
  active: false,
  field_mappings: [],
  token_hashes: [{ hash: '0'.repeat(64), expires_at: null }],
  created_at: '',
  updated_at: '',
}

/**
 * The per-source webhook (contract 4.4, 4.6): the connection `{sourceId}` names, when the
 * presented token (header `x-webhook-token`, else query `token`) matches its stored hash.
 * Unknown, inactive or non-webhook source, missing, blank or wrong token, and an inactive
 * account are one answer: 401 `unauthorized` (section 5.6). `resolved`: the account the caller
 * already holds (the edge's subdomain), not read again when the source is one of its own.
 */
export async function authenticateSource(
  deps: AuthDeps,
  sourceId: string,
  headers: Headers,
  query: unknown,
  resolved?: AccountRecord,
): Promise<{ connection: ConnectionRecord; account: AccountRecord }> {
  const token = presentedSourceToken(headers, query)
  // ids are short; anything else is unknown without a lookup
  const found = sourceId.length > 0 && sourceId.length <= 128 ? await deps.tenantLookups.getConnection(sourceId) : null
  const usable = found !== null && found.active && found.type === 'webhook'
  const matches = await verifySourceToken(deps, usable ? found : NO_CONNECTION, token ?? '')
  if (!usable || token === null || !matches) throw new AppError('unauthorized')
  const account = resolved?.id === found.account_id ? resolved : await deps.tenantLookups.getAccount(found.account_id)
  if (!account || !account.active) throw new AppError('unauthorized')
  return { connection: found, account }
}

export interface PartnerCrmCaller {
  connection: ConnectionRecord
  location: LocationRecord
}

/** Whether a call without any token is refused for this connection: its own switch, or the global cutover date. */
export function tokenRequired(deps: Pick<AuthDeps, 'config' | 'clock'>, connection: ConnectionRecord): boolean {
  if (connection.require_token === true) return true
  const cutover = deps.config.partnerCrmTokenCutover
  return cutover !== null && deps.clock.now() >= cutover.getTime()
}

async function usableConnection(deps: AuthDeps, account: AccountRecord, connectionId: string): Promise<ConnectionRecord | null> {
  const connection = await deps.tenantLookups.getConnection(connectionId)
  if (!connection || !connection.active || connection.type !== 'partnercrm' || connection.account_id !== account.id) return null
  return connection
}

/**
 * Before the body is read: the location a presented token belongs to, found by the token's hash
 * among the account's locations (tenantLookups.findLocationByTokenHash), when it is an active location
 * of the account's active partner CRM connection and the hash is still valid. null otherwise: the
 * caller is then not authenticated yet and its body is read within the pre-authentication budget
 * (preauth-budget.ts), where the usual checks decide (404 before 401, as without this shortcut).
 */
export async function identifyPartnerCrmToken(deps: AuthDeps, account: AccountRecord, token: string): Promise<PartnerCrmCaller | null> {
  if (token.length === 0 || token.length > 256) return null
  const hash = hashSecret(await getKeyPepper(deps), token)
  const location = await deps.tenantLookups.findLocationByTokenHash(account.id, hash)
  if (!location || !location.active || location.account_id !== account.id) return null
  if (!matchesHashedSecret(hash, location.token_hashes, deps.clock.now())) return null
  const connection = await usableConnection(deps, account, location.connection_id)
  return connection ? { connection, location } : null
}

/**
 * Before the body is read, for a call without any token: 404 when the account has no active
 * partner CRM connection (identical to an unknown subdomain), 401 when that connection no longer
 * accepts token-less calls (its `require_token` switch or PARTNERCRM_TOKEN_CUTOVER). Such calls
 * never get to make the edge buffer a body.
 */
export async function refuseTokenlessEarly(deps: AuthDeps, account: AccountRecord): Promise<void> {
  const connection = (await deps.tenantLookups.listConnections(account.id)).find((c) => c.type === 'partnercrm' && c.active)
  if (!connection) throw new AppError('not_found')
  if (tokenRequired(deps, connection)) throw new AppError('unauthorized')
}

/**
 * The partner CRM webhook (contract 4.5) for an account the subdomain already resolved.
 * 404 `not found` (identical to an unknown subdomain) when the body names no location, or the
 * location is not active, or its connection is not an active partner CRM connection of the
 * account. Then the token: a presented one (even blank) must match the location's hash, else 401;
 * no token at all is accepted and flagged in the logs until the connection is cut over (its
 * `require_token` switch, or PARTNERCRM_TOKEN_CUTOVER for every connection), 401 from then on.
 * `identified`: what identifyPartnerCrmToken found before the body; it stands when the body names
 * the same location (no second lookup), otherwise the body's location decides as usual.
 */
export async function authenticatePartnerCrm(
  deps: AuthDeps,
  account: AccountRecord,
  locationId: string | null,
  headers: Headers,
  query: unknown,
  identified: PartnerCrmCaller | null = null,
): Promise<PartnerCrmCaller & { tokenless: boolean }> {
  if (locationId === null || locationId.length > 256) throw new AppError('not_found')
  if (identified && identified.location.location_id === locationId) return { ...identified, tokenless: false }
  const location = await deps.tenantLookups.getLocation(account.id, locationId)
  if (!location || !location.active || location.account_id !== account.id) throw new AppError('not_found')
  const connection = await usableConnection(deps, account, location.connection_id)
  if (!connection) throw new AppError('not_found')
  const token = presentedSourceToken(headers, query)
  if (token === null) {
    if (tokenRequired(deps, connection)) throw new AppError('unauthorized')
    deps.logger.warn(
      { accountId: account.id, locationId, connectionId: connection.id, flag: 'partnercrm_tokenless' },
      'partner CRM webhook call without a token accepted (before the tokenized-URL cutover)',
    )
    return { connection, location, tokenless: true }
  }
  if (!(await verifyLocationToken(deps, location, token))) throw new AppError('unauthorized')
  return { connection, location, tokenless: false }
}
