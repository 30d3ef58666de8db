import type { ApiKeyRecord } from '../../model/records.ts'
import type { PlatformDeps } from '../../ports/deps.ts'
import type { PushCredential } from '../../ports/push-log.ts'
import { presentedApiKey } from '../auth/authenticate-api-key.ts'
import { hashSecret } from '../auth/hashing.ts'
import { getKeyPepper } from '../secrets/platform-secrets.ts'
import { presentedSourceToken } from '../auth/verify-source-token.ts'

type Deps = Pick<PlatformDeps, 'config' | 'secrets' | 'tenantLookups'>
type Headers = Record<string, string | string[] | undefined>

/** An API key as the debugger names it: its id and name or display prefix, never the key. */
export function apiKeyCredential(key: ApiKeyRecord): PushCredential {
  return { kind: 'api_key', id: key.id, label: key.name ? `${key.name} (${key.prefix}…)` : `${key.prefix}…` }
}

/**
 * The key of a refused API-key push, when it is a key of `account` (revoked, expired, lacking
 * the scope): the same cached lookup by hash authentication just made, so the tenant sees which
 * of its keys is still being sent. A key nobody issued names no connection: null.
 */
export async function refusedApiKey(deps: Deps, headers: Headers, accountId: string): Promise<ApiKeyRecord | null> {
  const presented = presentedApiKey(headers)
  if (presented === null) return null
  const key = await deps.tenantLookups.getApiKeyByHash(hashSecret(await getKeyPepper(deps), presented))
  return key && key.account_id === accountId ? key : null
}

/**
 * The webhook source a refused per-source push names, when it is one of `account`'s: its path
 * names it, so a wrong or missing token is shown on that connection (without the token).
 */
export async function refusedSource(
  deps: Deps,
  sourceId: string,
  headers: Headers,
  query: unknown,
  accountId: string,
): Promise<{ connectionId: string; credential: PushCredential } | null> {
  if (sourceId.length === 0 || sourceId.length > 128) return null
  const connection = await deps.tenantLookups.getConnection(sourceId)
  if (!connection || connection.account_id !== accountId || connection.type !== 'webhook') return null
  const presented = presentedSourceToken(headers, query) !== null
  return {
    connectionId: connection.id,
    credential: { kind: presented ? 'source_token' : 'none', id: null, label: presented ? 'a token that does not match' : null },
  }
}
