import type { PlatformDeps } from '../../platform/deps.ts'
import { AppError } from '../../errors/app-error.ts'
import type { DeliveryRecord, IntegrationRecord } from '../records.ts'
import { replayDelivery } from './deliveries.ts'
import { decodeKeysetCursor, encodeKeysetCursor } from '../contacts/cursor.ts'

export type DeliveryLogEntry = Omit<DeliveryRecord, 'body' | 'account_id' | 'integration_id'>

async function integrationOf(deps: Pick<PlatformDeps, 'tenants'>, accountId: string, integrationId: string): Promise<IntegrationRecord> {
  const integration = await deps.tenants.getIntegration(integrationId)
  // another account's integration is indistinguishable from a missing one
  if (!integration || integration.account_id !== accountId) throw new AppError('not_found')
  return integration
}

/** One page of the delivery log, newest first; bodies are not listed (they stay for replay). */
export async function listDeliveryLog(
  deps: Pick<PlatformDeps, 'tenants'>,
  accountId: string,
  integrationId: string,
  options: { cursor: string | undefined; limit: number },
): Promise<{ object: 'list'; data: DeliveryLogEntry[]; has_more: boolean; next_cursor: string | null }> {
  await integrationOf(deps, accountId, integrationId)
  const before = decodeKeysetCursor('d1', options.cursor)
  const rows = await deps.tenants.listDeliveries(integrationId, { ...(before ? { before } : {}), limit: options.limit + 1 })
  const hasMore = rows.length > options.limit
  const page = rows.slice(0, options.limit)
  return {
    object: 'list',
    data: page.map(({ body: _b, account_id: _a, integration_id: _i, ...entry }) => entry),
    has_more: hasMore,
    next_cursor: hasMore ? encodeKeysetCursor('d1', page[page.length - 1]!.id) : null,
  }
}

/** Replay of one kept delivery; 409 while the integration is disabled (re-enable it first). */
export async function replayDeliveryFor(
  deps: Pick<PlatformDeps, 'tenants' | 'tasks' | 'clock'>,
  accountId: string,
  integrationId: string,
  deliveryId: string,
): Promise<DeliveryRecord> {
  const integration = await integrationOf(deps, accountId, integrationId)
  const delivery = await deps.tenants.getDelivery(deliveryId)
  if (!delivery || delivery.integration_id !== integration.id) throw new AppError('not_found')
  if (!integration.active) throw new AppError('conflict')
  return replayDelivery(deps, delivery)
}
