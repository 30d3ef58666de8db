import { AppError } from '../../errors/app-error.ts'
import type { ConnectionRecord } from '../../model/records.ts'
import type { PushQuotaSubject } from '../ingest/rate-limit.ts'
import type { PortalDeps } from './deps.ts'
import type { PortalSession } from './sessions.ts'

/** How a session's push is stored and counted. */
export interface PortalPushCaller {
  /** whose `source` anchors the records and whose field mappings apply */
  connection: ConnectionRecord
  /** the rate-limit window it counts in */
  quota: PushQuotaSubject
}

/**
 * A session in place of an API key on `POST /api/contacts` (contract 4.6 rule 1): the push goes
 * through the account's api connection, as a push with one of its keys would, so the records get
 * the same `source` and field mappings. With several, the oldest active one (a stable choice);
 * with none, 403 `forbidden` (a valid credential that cannot push). An account whose plan has no
 * API access (`api_access: false`) cannot push through a session either: 403 `forbidden`, as
 * its keys get (domain/auth/authenticate-api-key.ts; issue 21 item 8), or the session would be
 * a way around the plan. The session counts in one window per account, the limits of a key
 * (contract section 8).
 */
/** The one window every session of the account pushes in (the Activity screen shows it too). */
export const portalSessionQuota = (accountId: string): PushQuotaSubject => ({ kind: 'key', keyId: `portal-session:${accountId}` })

export async function portalPushCaller(deps: Pick<PortalDeps, 'tenants'>, caller: PortalSession): Promise<PortalPushCaller> {
  if (!caller.account.api_access) throw new AppError('forbidden')
  const api = (await deps.tenants.listConnections(caller.account.id))
    .filter((c) => c.type === 'api' && c.active && c.account_id === caller.account.id)
    .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0))[0]
  if (!api) throw new AppError('forbidden')
  return { connection: api, quota: portalSessionQuota(caller.account.id) }
}
