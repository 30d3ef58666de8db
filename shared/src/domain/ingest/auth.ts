import type { AccountRecord, ConnectionRecord, LocationRecord } from '../records.ts'
import type { PlatformDeps } from '../../platform/deps.ts'
import { AppError } from '../../errors/app-error.ts'
import { presentedSourceToken, verifyLocationToken, verifySourceToken } from '../auth/source-tokens.ts'

type Headers = Record<string, string | string[] | undefined>
type AuthDeps = Pick<PlatformDeps, 'config' | 'secrets' | 'tenants' | 'clock' | 'logger'>

/** stands in for an unknown connection so the token check costs the same either way */
const NO_CONNECTION: ConnectionRecord = {
  id: '', account_id: '', type: 'webhook', source: '', name: null, active: false, field_mappings: [],
  token_hashes: [{ hash: '0'.repeat(64), expires_at: null }], created_at: '', updated_at: '',
}

/**
 * The per-source webhook (contract 4.4, 4.6): the connection `{sourceId}` names, when the
 * presented token (header `x-webhook-token`, else query `token`) matches its stored hash.
 * Unknown, inactive or non-webhook source, missing, blank or wrong token, and an inactive
 * account are one answer: 401 `unauthorized` (section 5.6). `resolved`: the account the caller
 * already holds (the edge's subdomain), not read again when the source is one of its own.
 */
export async function authenticateSource(
  deps: AuthDeps, sourceId: string, headers: Headers, query: unknown, resolved?: AccountRecord,
): Promise<{ connection: ConnectionRecord; account: AccountRecord }> {
  const token = presentedSourceToken(headers, query)
  // ids are short; anything else is unknown without a lookup
  const found = sourceId.length > 0 && sourceId.length <= 128 ? await deps.tenants.getConnection(sourceId) : null
  const usable = found !== null && found.active && found.type === 'webhook'
  const matches = await verifySourceToken(deps, usable ? found : NO_CONNECTION, token ?? '')
  if (!usable || token === null || !matches) throw new AppError('unauthorized')
  const account = resolved?.id === found.account_id ? resolved : await deps.tenants.getAccount(found.account_id)
  if (!account || !account.active) throw new AppError('unauthorized')
  return { connection: found, account }
}

/**
 * The partner CRM webhook (contract 4.5) for an account the subdomain already resolved.
 * 404 `not found` (identical to an unknown subdomain) when the body names no location, or the
 * location is not active, or its connection is not an active partner CRM connection of the
 * account. Then the token: a presented one (even blank) must match the location's hash, else 401;
 * no token at all is accepted and flagged in the logs until the cutover
 * (`PARTNERCRM_TOKEN_CUTOVER`), 401 from the cutover on.
 */
export async function authenticatePartnerCrm(
  deps: AuthDeps, account: AccountRecord, locationId: string | null, headers: Headers, query: unknown,
): Promise<{ connection: ConnectionRecord; location: LocationRecord; tokenless: boolean }> {
  if (locationId === null || locationId.length > 256) throw new AppError('not_found')
  const location = await deps.tenants.getLocation(account.id, locationId)
  if (!location || !location.active || location.account_id !== account.id) throw new AppError('not_found')
  const connection = await deps.tenants.getConnection(location.connection_id)
  if (!connection || !connection.active || connection.type !== 'partnercrm' || connection.account_id !== account.id) {
    throw new AppError('not_found')
  }
  const token = presentedSourceToken(headers, query)
  if (token === null) {
    const cutover = deps.config.partnerCrmTokenCutover
    if (cutover !== null && deps.clock.now() >= cutover.getTime()) throw new AppError('unauthorized')
    deps.logger.warn({ accountId: account.id, locationId, connectionId: connection.id, flag: 'partnercrm_tokenless' },
      'partner CRM webhook call without a token accepted (before the tokenized-URL cutover)')
    return { connection, location, tokenless: true }
  }
  if (!(await verifyLocationToken(deps, location, token))) throw new AppError('unauthorized')
  return { connection, location, tokenless: false }
}
