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
  return listInStatus(deps, integrationId, 'failed', since)
}

/**
 * The deliveries of one integration now in `status` (created at or after `since` when given):
 * listed through the store's status index, newest first, at most RECOVER_MAX_DELIVERIES (one more
 * is read to know whether there are more); answered oldest first.
 */
async function listInStatus(
  deps: Pick<PlatformDeps, 'deliveries'>,
  integrationId: string,
  status: DeliveryRecord['status'],
  since?: string,
): Promise<RecoverPlan> {
  const found: DeliveryRecord[] = []
  let before: string | undefined
  for (;;) {
    const limit = Math.min(PAGE, RECOVER_MAX_DELIVERIES + 1 - found.length)
    const rows = await deps.deliveries.list(integrationId, { ...(before ? { before } : {}), ...(since ? { createdFrom: since } : {}), status, limit })
    found.push(...rows)
    // the one read beyond the maximum only says there are more
    if (found.length > RECOVER_MAX_DELIVERIES) return { failed: found.slice(0, RECOVER_MAX_DELIVERIES).reverse(), complete: false }
    if (rows.length < limit) return { failed: found.reverse(), complete: true }
    before = rows.at(-1)!.id
  }
}

/** The deliveries of one integration waiting for a retry (status `retrying`), oldest first, at most RECOVER_MAX_DELIVERIES. */
export async function planRetryWaiting(deps: Pick<PlatformDeps, 'tenants' | 'deliveries'>, accountId: string, integrationId: string): Promise<RecoverPlan> {
  await integrationOf(deps, accountId, integrationId)
  return listInStatus(deps, integrationId, 'retrying')
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
export async function recoverFailedDeliveries(deps: ReplayAllDeps, accountId: string, integrationId: string, since: string): Promise<RecoverResult> {
  const integration = await integrationOf(deps, accountId, integrationId)
  if (!integration.active) throw new AppError('conflict')
  return replayAll(deps, accountId, await planRecover(deps, accountId, integrationId, since))
}

/**
 * "Retry everything waiting" (after the receiver was fixed): every delivery of the integration
 * still waiting for a retry (status `retrying`) is sent now instead of at its next_attempt_at,
 * through the delivery log's replay path (replayDelivery: a new run starting now, under a task
 * name the waiting retry does not have, so the scheduler cannot fold it into the later one; the
 * waiting task then finds its attempt already made and runs nothing). Bounded and limited like a
 * recover. Idempotent: a replayed delivery is `pending`, no longer `retrying`, so a second call
 * sends none of them again. 409 while the integration is disabled.
 */
export async function retryWaitingDeliveries(deps: ReplayAllDeps, accountId: string, integrationId: string): Promise<RecoverResult> {
  const integration = await integrationOf(deps, accountId, integrationId)
  if (!integration.active) throw new AppError('conflict')
  return replayAll(deps, accountId, await planRetryWaiting(deps, accountId, integrationId))
}

type ReplayAllDeps = Pick<PlatformDeps, 'tenants' | 'deliveries' | 'tasks' | 'clock' | 'rateLimiter' | 'counters' | 'logger' | 'config' | 'listeners'>

/** Replays the plan's deliveries in order, each counted in the account's replay limit; stops when the limit is spent. */
async function replayAll(deps: ReplayAllDeps, accountId: string, plan: RecoverPlan): Promise<RecoverResult> {
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
