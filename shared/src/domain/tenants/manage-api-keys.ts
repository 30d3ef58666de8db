import { AppError } from '../../errors/app-error.ts'
import type { ApiKeyView, CreateKeyBody, CreatedApiKey, RotatedApiKey } from '../../contract/admin.ts'
import { DEFAULT_ROTATION_GRACE_SECONDS } from '../../contract/admin.ts'
import { getKeyPepper } from '../secrets/platform-secrets.ts'
import { generateApiKey, hashSecret } from '../auth/hashing.ts'
import { isKeyUsable } from '../auth/authenticate-api-key.ts'
import { prefixedId } from '../../model/ids.ts'
import { ALL_SCOPES, type ApiKeyRecord, type Scope } from '../../model/records.ts'
import { invalidPayload, isoAfter, issue, nowIso, requireAccount, requireConnection, type TenantDeps } from './common.ts'
import { apiKeyView } from './views.ts'

const DEFAULT_SCOPES: readonly Scope[] = ['contacts:write']
/** `lsk_` + 8 characters: enough to tell keys apart in a list, far too little to guess the rest */
const PREFIX_LENGTH = 12

/** Issues a key record for `key`; the key itself is never stored, only its keyed hash. */
async function storeNewKey(
  deps: TenantDeps,
  base: Pick<ApiKeyRecord, 'account_id' | 'connection_id' | 'scopes' | 'name' | 'expires_at'>,
): Promise<{ key: string; record: ApiKeyRecord }> {
  const key = generateApiKey()
  const record: ApiKeyRecord = {
    id: prefixedId('key'),
    ...base,
    hash: hashSecret(await getKeyPepper(deps), key),
    prefix: key.slice(0, PREFIX_LENGTH),
    revoked_at: null,
    created_at: nowIso(deps),
  }
  await deps.tenants.createApiKey(record)
  return { key, record }
}

/** The key `keyId` of this connection of this account; any other key is a 404. */
async function requireKey(deps: TenantDeps, accountId: string, connectionId: string, keyId: string): Promise<ApiKeyRecord> {
  await requireAccount(deps, accountId)
  await requireConnection(deps, accountId, connectionId)
  const key = await deps.tenants.getApiKey(keyId)
  if (!key || key.account_id !== accountId || key.connection_id !== connectionId) throw new AppError('not_found')
  return key
}

/** The earlier of an existing end of validity and a new one: revocation never extends a key's life. */
function earlier(current: string | null, next: string): string {
  return current !== null && Date.parse(current) < Date.parse(next) ? current : next
}

/** `POST …/connections/{connectionId}/keys` (api connections only). The key is in the response once. */
export async function issueApiKey(deps: TenantDeps, accountId: string, connectionId: string, body: CreateKeyBody): Promise<CreatedApiKey> {
  await requireAccount(deps, accountId)
  await requireConnection(deps, accountId, connectionId, 'api', 'issuing an API key')
  const scopes = [...new Set(body.scopes ?? DEFAULT_SCOPES)]
  const unknown = scopes.findIndex((s) => !ALL_SCOPES.includes(s))
  if (unknown >= 0) throw invalidPayload(issue(`/scopes/${unknown}`, 'enum', `must be one of ${ALL_SCOPES.join(', ')}`))
  const expiresAt = body.expires_at ?? null
  if (expiresAt !== null && Date.parse(expiresAt) <= deps.clock.now()) {
    throw invalidPayload(issue('/expires_at', 'future', 'must lie in the future'))
  }
  const { key, record } = await storeNewKey(deps, {
    account_id: accountId,
    connection_id: connectionId,
    scopes,
    name: body.name ?? null,
    expires_at: expiresAt === null ? null : new Date(expiresAt).toISOString(),
  })
  return { ...apiKeyView(record), key }
}

/**
 * `POST …/keys/{keyId}/rotate`: a new key with the same scopes, name and expiry; the old key
 * keeps working for `grace_seconds` (default one day) so callers can switch without downtime.
 * A key that no longer works (revoked or expired) is not rotated: 409 `conflict`, issue a new one.
 */
export async function rotateApiKey(
  deps: TenantDeps,
  accountId: string,
  connectionId: string,
  keyId: string,
  graceSeconds = DEFAULT_ROTATION_GRACE_SECONDS,
): Promise<RotatedApiKey> {
  const old = await requireKey(deps, accountId, connectionId, keyId)
  if (!isKeyUsable(old, deps.clock.now())) throw new AppError('conflict')
  const { key, record } = await storeNewKey(deps, {
    account_id: old.account_id,
    connection_id: old.connection_id,
    scopes: [...old.scopes],
    name: old.name,
    expires_at: old.expires_at,
  })
  const revokedAt = earlier(old.revoked_at, isoAfter(deps, graceSeconds))
  await deps.tenants.updateApiKey(old.id, { revoked_at: revokedAt })
  return { ...apiKeyView(record), key, previous: { id: old.id, revoked_at: revokedAt } }
}

/**
 * `DELETE …/keys/{keyId}?grace_seconds=N`: the key answers 401 from now + N seconds (default 0:
 * at once). Idempotent: revoking a revoked key answers 204 again and never extends its life.
 */
export async function revokeApiKey(deps: TenantDeps, accountId: string, connectionId: string, keyId: string, graceSeconds = 0): Promise<ApiKeyView> {
  const key = await requireKey(deps, accountId, connectionId, keyId)
  const revokedAt = earlier(key.revoked_at, isoAfter(deps, graceSeconds))
  const updated = await deps.tenants.updateApiKey(key.id, { revoked_at: revokedAt })
  if (!updated) throw new AppError('not_found')
  return apiKeyView(updated)
}

/** Metadata of one key (never the key nor its hash). The tenant store has no key listing. */
export async function getApiKey(deps: TenantDeps, accountId: string, connectionId: string, keyId: string): Promise<ApiKeyView> {
  return apiKeyView(await requireKey(deps, accountId, connectionId, keyId))
}
