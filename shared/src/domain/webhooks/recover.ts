import type { PlatformDeps } from '../../ports/deps.ts'
import { AppError, isAppError } from '../../errors/app-error.ts'
import type { DeliveryRecord } from '../../model/records.ts'
import { replayDelivery } from './deliveries.ts'
import { integrationOf } from './delivery-log.ts'
import { consumeWebhookActionQuota } from './rate-limit.ts'

/**
 * A recover replays at most this many failed deliveries (the newest ones since its time, sent
 * oldest first). The store lists the failed ones alone (its status index), so finding them reads
 * at most this many records plus one: bounded work per request, whatever else the range holds.
 */
export const RECOVER_MAX_DELIVERIES = 1000
/** The progress counts stop at this many deliveries per status ("at least" beyond): index entries counted, no record read. */
export const RECOVER_COUNT_CAP = 10_000
const PAGE = 200

/** The failed deliveries a recover since `since` would replay, oldest first, and what was read to find them. */
export interface RecoverPlan {
  failed: DeliveryRecord[]
  /** false when more than RECOVER_MAX_DELIVERIES failed since the time (the oldest wait for the next recover) */
  complete: boolean
}

/**
 * The failed deliveries of one integration created at or after `since` (Svix's "recover"):
 * listed by the store in that status and time range, newest first, at most RECOVER_MAX_DELIVERIES
 * (one more is read to know whether there are more); answered oldest first, the order a receiver
 * would have seen them.
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
  for (;;) {
    const limit = Math.min(PAGE, RECOVER_MAX_DELIVERIES + 1 - failed.length)
    const rows = await deps.deliveries.list(integrationId, { ...(before ? { before } : {}), createdFrom: since, status: 'failed', limit })
    failed.push(...rows)
    // the one read beyond the maximum only says there are more
    if (failed.length > RECOVER_MAX_DELIVERIES) return { failed: failed.slice(0, RECOVER_MAX_DELIVERIES).reverse(), complete: false }
    if (rows.length < limit) return { failed: failed.reverse(), complete: true }
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
  deps: Pick<PlatformDeps, 'tenants' | 'deliveries' | 'tasks' | 'clock' | 'rateLimiter' | 'counters' | 'logger' | 'config' | 'listeners'>,
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

/**
 * How many deliveries since a time are in each status: a recover's progress, read live.
 * `complete` is false when a count reached RECOVER_COUNT_CAP (that count means "at least").
 */
export type StatusCounts = Record<DeliveryRecord['status'], number> & { complete: boolean }

/** Counts the statuses of the deliveries created since `since`: the store's counts, each capped at RECOVER_COUNT_CAP. */
export async function statusCountsSince(
  deps: Pick<PlatformDeps, 'tenants' | 'deliveries'>,
  accountId: string,
  integrationId: string,
  since: string,
): Promise<StatusCounts> {
  await integrationOf(deps, accountId, integrationId)
  const counts = await deps.deliveries.countByStatus(integrationId, { createdFrom: since, cap: RECOVER_COUNT_CAP })
  return { ...counts, complete: Object.values(counts).every((n) => n < RECOVER_COUNT_CAP) }
}
