import { AppError } from '../../errors/app-error.ts'
import type { CreatedLocation, RotatedLocationToken } from '../../contract/admin.ts'
import { DEFAULT_ROTATION_GRACE_SECONDS } from '../../contract/admin.ts'
import { DuplicateError } from '../../errors/duplicate-error.ts'
import { getKeyPepper } from '../secrets/platform-secrets.ts'
import { generateSourceToken, hashSecret } from '../auth/hashing.ts'
import type { LocationRecord } from '../../model/records.ts'
import { invalidPayload, isoAfter, issue, nowIso, requireAccount, requireConnection, type TenantDeps } from './common.ts'
import { rotatedHashes } from './rotate-source-token.ts'
import { partnerCrmWebhookUrl } from './views.ts'

/**
 * `POST …/connections/{connectionId}/locations` (partnercrm connections only). A location id is
 * unique per account among active locations (the edge finds a location by account and id):
 * adding an active one again is 409 `conflict`; adding a removed one re-activates it with a new
 * token (the old token stays dead).
 */
export async function addLocation(deps: TenantDeps, accountId: string, connectionId: string, locationId: string): Promise<CreatedLocation> {
  const account = await requireAccount(deps, accountId)
  await requireConnection(deps, accountId, connectionId, 'partnercrm', 'adding a location')
  if (locationId.trim() !== locationId || locationId === '') throw invalidPayload(issue('/location_id', 'blank', 'must not be blank or padded'))
  const existing = await deps.tenants.getLocation(accountId, locationId)
  const token = generateSourceToken()
  const now = nowIso(deps)
  const location: LocationRecord = {
    account_id: accountId,
    connection_id: connectionId,
    location_id: locationId,
    token_hashes: [{ hash: hashSecret(await getKeyPepper(deps), token), expires_at: null }],
    active: true,
    created_at: existing?.created_at ?? now,
    updated_at: now,
  }
  try {
    await deps.tenants.putLocation(location)
  } catch (err) {
    if (err instanceof DuplicateError) throw new AppError('conflict', { cause: err })
    throw err
  }
  return { location_id: locationId, token, webhook_url: partnerCrmWebhookUrl(deps.config, account), active: true, created_at: location.created_at }
}

/**
 * `DELETE …/connections/{connectionId}/locations/{locationId}`: the location is no longer active
 * and its tokens are dropped. Idempotent for a location of this connection; a location this
 * connection never had is 404.
 */
export async function removeLocation(deps: TenantDeps, accountId: string, connectionId: string, locationId: string): Promise<void> {
  await requireAccount(deps, accountId)
  await requireConnection(deps, accountId, connectionId, 'partnercrm', 'removing a location')
  const existing = await deps.tenants.getLocation(accountId, locationId)
  if (!existing || existing.connection_id !== connectionId) throw new AppError('not_found')
  await deps.tenants.updateLocation(accountId, locationId, { active: false, token_hashes: [], updated_at: nowIso(deps) })
}

/**
 * `POST …/locations/{locationId}/token/rotate`: a new location token, shown once; the previous one
 * keeps working for `grace_seconds` (default one day), like a webhook source token. Only an
 * active location of this connection has a token to rotate (otherwise 404).
 */
export async function rotateLocationToken(
  deps: TenantDeps,
  accountId: string,
  connectionId: string,
  locationId: string,
  graceSeconds = DEFAULT_ROTATION_GRACE_SECONDS,
): Promise<RotatedLocationToken> {
  const account = await requireAccount(deps, accountId)
  await requireConnection(deps, accountId, connectionId, 'partnercrm', 'rotating a location token')
  const location = await deps.tenants.getLocation(accountId, locationId)
  if (!location || location.connection_id !== connectionId || !location.active) throw new AppError('not_found')
  const token = generateSourceToken()
  const { hashes, previousExpiresAt } = rotatedHashes(
    location.token_hashes,
    hashSecret(await getKeyPepper(deps), token),
    deps.clock.now(),
    isoAfter(deps, graceSeconds),
  )
  const updated = await deps.tenants.updateLocation(accountId, locationId, { token_hashes: hashes, updated_at: nowIso(deps) })
  if (!updated) throw new AppError('not_found')
  return { location_id: locationId, token, webhook_url: partnerCrmWebhookUrl(deps.config, account), previous_expires_at: previousExpiresAt }
}
