import { randomUUID } from 'node:crypto'
import type { PlatformDeps } from '../../shared/src/ports/deps.ts'
import { generateApiKey, hashSecret } from '../../shared/src/domain/auth/hashing.ts'

/** The pepper every bench's platform is configured with (KEY_PEPPER). */
export const BENCH_PEPPER = 'bench-pepper'

/** An active account with API access and every tier, through the tenant store of `deps`; returns its public id. */
export async function makeBenchAccount(deps: Pick<PlatformDeps, 'tenants'>, accountId: string, now: string): Promise<string> {
  const publicId = `bench-${accountId.slice(0, 8)}`
  await deps.tenants.createAccount({
    id: accountId,
    public_id: publicId,
    name: null,
    active: true,
    api_access: true,
    permitted_tiers: [1, 2, 3],
    authorized_domains: [],
    created_at: now,
    updated_at: now,
  })
  return publicId
}

/**
 * An account with one API connection and a `contacts:write` key, through the tenant store of
 * `deps` (bench/push-ab.ts passes the deps of another checkout: the store's methods are the same,
 * and the key's hash is the same HMAC in both trees). Returns the edge's Host and the key.
 */
export async function makeBenchTenant(
  deps: Pick<PlatformDeps, 'tenants' | 'config'>,
): Promise<{ host: string; key: string; accountId: string; connectionId: string }> {
  const now = new Date().toISOString()
  const accountId = randomUUID()
  const publicId = await makeBenchAccount(deps, accountId, now)
  const connectionId = `con_${accountId.slice(0, 12)}`
  await deps.tenants.createConnection({
    id: connectionId,
    account_id: accountId,
    type: 'api',
    source: 'crm',
    name: null,
    active: true,
    field_mappings: [],
    token_hashes: [],
    created_at: now,
    updated_at: now,
  })
  const key = generateApiKey()
  await deps.tenants.createApiKey({
    id: `key_${accountId.slice(0, 12)}`,
    account_id: accountId,
    connection_id: connectionId,
    hash: hashSecret(BENCH_PEPPER, key),
    prefix: key.slice(0, 8),
    scopes: ['contacts:write'],
    name: null,
    expires_at: null,
    revoked_at: null,
    created_at: now,
  })
  return { host: `${publicId}.${deps.config.edgeDomain}`, key, accountId, connectionId }
}
