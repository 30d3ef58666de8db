import type { PlatformDeps } from '../../ports/deps.ts'
import { AppError, isAppError } from '../../errors/app-error.ts'
import type { DeliveryRecord } from '../../model/records.ts'
import { replayDelivery } from './deliveries.ts'
import { integrationOf } from './delivery-log.ts'
import { consumeWebhookActionQuota } from './rate-limit.ts'

/** A recover replays at most this many failed deliveries (the oldest ones since its time first). */
export const RECOVER_MAX_DELIVERIES = 1000
/** and reads at most this many deliveries of the range to find them: bounded work per request */
export const RECOVER_SCAN_LIMIT = 5000
const PAGE = 200

/** The failed deliveries a recover since `since` would replay, oldest first, and what was read to find them. */
export interface RecoverPlan {
  failed: DeliveryRecord[]
  /** false when the scan stopped at RECOVER_SCAN_LIMIT or RECOVER_MAX_DELIVERIES before the range's end */
  complete: boolean
}

/**
 * The failed deliveries of one integration created at or after `since` (Svix's "recover"):
 * read newest first through the store's time range, at most RECOVER_SCAN_LIMIT rows, keeping at
 * most RECOVER_MAX_DELIVERIES; answered oldest first, the order a receiver would have seen them.
 */
export async function planRecover(
  deps: Pick<PlatformDeps, 'tenants' | 'deliveries'>,
  accountId: string,
  integrationId: string,
  since: string,
): Promise<RecoverPlan> {
  await integrationOf(deps, accountId, integrationId)
  const failed: DeliveryRecord[] = []
  let before: string | undefined
  let scanned = 0
  for (;;) {
    const rows = await deps.deliveries.list(integrationId, { ...(before ? { before } : {}), createdFrom: since, limit: PAGE })
    for (const row of rows) {
      scanned++
      if (row.status === 'failed') failed.push(row)
      if (failed.length === RECOVER_MAX_DELIVERIES || scanned === RECOVER_SCAN_LIMIT) return { failed: failed.reverse(), complete: false }
    }
    if (rows.length < PAGE) return { failed: failed.reverse(), complete: true }
    before = rows.at(-1)!.id
  }
}

export interface RecoverResult {
  /** failed deliveries found since the time (at most RECOVER_MAX_DELIVERIES) */
  found: number
  /** queued again now */
  replayed: number
  /** seconds until the replay limit lets the rest go; null when nothing was held back */
  retryAfter: number | null
  complete: boolean
}

/**
 * Replays every failed delivery of the account's integration since `since`, oldest first. Each
 * replay counts in the account's replay limit (rate-limit.ts) like a replay of one delivery, so a
 * recover makes the platform send no more than replays would; when the limit is spent the rest
 * stay failed and the answer says when to recover again (the ones replayed are no longer failed,
 * so a second recover from the same time sends none of them twice). 409 while the integration is
 * disabled.
 */
export async function recoverFailedDeliveries(
  deps: Pick<PlatformDeps, 'tenants' | 'deliveries' | 'tasks' | 'clock' | 'rateLimiter' | 'logger' | 'config'>,
  accountId: string,
  integrationId: string,
  since: string,
): Promise<RecoverResult> {
  const integration = await integrationOf(deps, accountId, integrationId)
  if (!integration.active) throw new AppError('conflict')
  const plan = await planRecover(deps, accountId, integrationId, since)
  let replayed = 0
  for (const delivery of plan.failed) {
    try {
      await consumeWebhookActionQuota(deps, 'replay', accountId)
    } catch (err) {
      if (!isAppError(err) || err.status !== 429) throw err
      return { found: plan.failed.length, replayed, retryAfter: Number(err.headers['retry-after'] ?? 60), complete: plan.complete }
    }
    await replayDelivery(deps, delivery)
    replayed++
  }
  return { found: plan.failed.length, replayed, retryAfter: null, complete: plan.complete }
}

/** How many deliveries since a time are in each status: a recover's progress, read live. */
export type StatusCounts = Record<DeliveryRecord['status'], number> & { complete: boolean }

/** Counts the statuses of the deliveries created since `since` (at most RECOVER_SCAN_LIMIT read). */
export async function statusCountsSince(
  deps: Pick<PlatformDeps, 'tenants' | 'deliveries'>,
  accountId: string,
  integrationId: string,
  since: string,
): Promise<StatusCounts> {
  await integrationOf(deps, accountId, integrationId)
  const counts: StatusCounts = { pending: 0, retrying: 0, succeeded: 0, failed: 0, complete: true }
  let before: string | undefined
  let scanned = 0
  for (;;) {
    const rows = await deps.deliveries.list(integrationId, { ...(before ? { before } : {}), createdFrom: since, limit: PAGE })
    for (const row of rows) counts[row.status]++
    scanned += rows.length
    if (rows.length < PAGE) return counts
    if (scanned >= RECOVER_SCAN_LIMIT) return { ...counts, complete: false }
    before = rows.at(-1)!.id
  }
}
