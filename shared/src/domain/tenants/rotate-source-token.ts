import { AppError } from '../../errors/app-error.ts'
import type { RotatedToken } from '../../contract/admin.ts'
import { DEFAULT_ROTATION_GRACE_SECONDS } from '../../contract/admin.ts'
import { getKeyPepper } from '../secrets/platform-secrets.ts'
import { generateSourceToken, hashSecret } from '../auth/hashing.ts'
import type { HashedSecret } from '../../model/records.ts'
import { isoAfter, nowIso, requireAccount, requireConnection, type TenantDeps } from './common.ts'
import { sourceWebhookUrl } from './views.ts'

/**
 * The hash list after a rotation: the new hash (valid until replaced), the hashes still valid
 * until at most now + grace, and nothing already expired (so the list stays short).
 */
export function rotatedHashes(
  current: readonly HashedSecret[],
  newHash: string,
  nowMs: number,
  graceEndIso: string,
): { hashes: HashedSecret[]; previousExpiresAt: string | null } {
  const graceEnd = Date.parse(graceEndIso)
  const kept: HashedSecret[] = []
  let previousExpiresAt: string | null = null
  for (const h of current) {
    const end = h.expires_at === null ? graceEnd : Math.min(Date.parse(h.expires_at), graceEnd)
    if (end <= nowMs) continue
    const expires_at = new Date(end).toISOString()
    kept.push({ hash: h.hash, expires_at })
    if (previousExpiresAt === null || Date.parse(previousExpiresAt) < end) previousExpiresAt = expires_at
  }
  return { hashes: [{ hash: newHash, expires_at: null }, ...kept], previousExpiresAt }
}

/**
 * `POST …/connections/{connectionId}/token/rotate` (webhook connections only): a new source token,
 * shown once; the previous one keeps working for `grace_seconds` (default one day, 0: at once).
 */
export async function rotateSourceToken(
  deps: TenantDeps,
  accountId: string,
  connectionId: string,
  graceSeconds = DEFAULT_ROTATION_GRACE_SECONDS,
): Promise<RotatedToken> {
  const account = await requireAccount(deps, accountId)
  const connection = await requireConnection(deps, accountId, connectionId, 'webhook', 'rotating the source token')
  const token = generateSourceToken()
  const { hashes, previousExpiresAt } = rotatedHashes(
    connection.token_hashes,
    hashSecret(await getKeyPepper(deps), token),
    deps.clock.now(),
    isoAfter(deps, graceSeconds),
  )
  const updated = await deps.tenants.updateConnection(connection.id, { token_hashes: hashes, updated_at: nowIso(deps) })
  if (!updated) throw new AppError('not_found')
  return { token, webhook_url: sourceWebhookUrl(deps.config, account, connection.id), previous_expires_at: previousExpiresAt }
}
