import type { PlatformDeps } from '../../ports/deps.ts'
import { AppError } from '../../errors/app-error.ts'
import type { DeliveryRecord, IntegrationRecord } from '../../model/records.ts'
import { deliveryIdFor, replayDelivery } from './deliveries.ts'
import { TEST_EVENT_ID_PREFIX } from './test-event.ts'
import { decodeKeysetCursor, encodeKeysetCursor } from '../contacts/cursor.ts'

export type DeliveryLogEntry = Omit<DeliveryRecord, 'body' | 'account_id' | 'integration_id'>

async function integrationOf(deps: Pick<PlatformDeps, 'tenants'>, accountId: string, integrationId: string): Promise<IntegrationRecord> {
  const integration = await deps.tenants.getIntegration(integrationId)
  // another account's integration is indistinguishable from a missing one
  if (!integration || integration.account_id !== accountId) throw new AppError('not_found')
  return integration
}

export type DeliveryStatus = DeliveryRecord['status']

/** Rows read per page at most when a status filter skips rows (the page then ends early, with a cursor). */
const FILTER_SCAN_LIMIT = 1000

/** Test events (`sendTestEvent`) or the deliveries of real visits. */
export type DeliveryKind = 'test' | 'real'

/** What a page of the log is narrowed to; every filter given must hold. */
export interface DeliveryLogFilter {
  status?: DeliveryStatus | undefined
  kind?: DeliveryKind | undefined
  /** one event: at most one delivery per integration (its id is derived from the event id) */
  eventId?: string | undefined
}

type DeliveryLogPage = { object: 'list'; data: DeliveryLogEntry[]; has_more: boolean; next_cursor: string | null }

const entryOf = ({ body: _b, account_id: _a, integration_id: _i, ...entry }: DeliveryRecord): DeliveryLogEntry => entry

/** The row test of the status and kind filters; null when neither is set (every row is kept). */
function keepOf(filter: DeliveryLogFilter): ((row: DeliveryRecord) => boolean) | null {
  const { status, kind } = filter
  if (status === undefined && kind === undefined) return null
  return (row) => (status === undefined || row.status === status) && (kind === undefined || row.event_id.startsWith(TEST_EVENT_ID_PREFIX) === (kind === 'test'))
}

/**
 * One page of the delivery log, newest first; bodies are not listed (they stay for replay). With
 * `status` or `kind`, only the matching deliveries: rows are read in store pages and filtered, at
 * most FILTER_SCAN_LIMIT per answer, so a rare match answers a short page with a cursor to go on.
 * With `eventId`, the one delivery of that event is read by its id (no scan, no cursor), and the
 * other filters apply to it.
 */
export async function listDeliveryLog(
  deps: Pick<PlatformDeps, 'tenants' | 'deliveries'>,
  accountId: string,
  integrationId: string,
  options: { cursor: string | undefined; limit: number } & DeliveryLogFilter,
): Promise<DeliveryLogPage> {
  await integrationOf(deps, accountId, integrationId)
  const keep = keepOf(options)
  if (options.eventId !== undefined) {
    const row = await deps.deliveries.get(deliveryIdFor(options.eventId, integrationId))
    const found = row !== null && row.integration_id === integrationId && row.event_id === options.eventId && (keep === null || keep(row))
    return { object: 'list', data: found ? [entryOf(row)] : [], has_more: false, next_cursor: null }
  }
  let before = decodeKeysetCursor('d1', options.cursor)
  const page: DeliveryRecord[] = []
  let hasMore = false
  let scanned = 0
  let lastSeen: string | undefined
  for (;;) {
    const chunk = keep === null ? options.limit + 1 : Math.min(FILTER_SCAN_LIMIT - scanned, 100) + 1
    const rows = await deps.deliveries.list(integrationId, { ...(before ? { before } : {}), limit: chunk })
    const more = rows.length === chunk
    const taken = more ? rows.slice(0, chunk - 1) : rows
    for (const row of taken) {
      scanned++
      lastSeen = row.id
      if (keep !== null && !keep(row)) continue
      if (page.length === options.limit) {
        hasMore = true
        break
      }
      page.push(row)
    }
    if (hasMore) break
    if (!more) break
    before = taken[taken.length - 1]!.id
    if (keep === null) {
      hasMore = page.length === options.limit
      break
    }
    if (scanned >= FILTER_SCAN_LIMIT) {
      hasMore = true
      break
    }
  }
  // the cursor continues after the last row returned, or after the last row scanned when filtering stopped early
  const cursorId = hasMore ? (page.length === options.limit ? page[page.length - 1]!.id : lastSeen) : undefined
  return {
    object: 'list',
    data: page.map(entryOf),
    has_more: hasMore,
    next_cursor: cursorId ? encodeKeysetCursor('d1', cursorId) : null,
  }
}

/** Replay of one kept delivery; 409 while the integration is disabled (re-enable it first). */
export async function replayDeliveryFor(
  deps: Pick<PlatformDeps, 'tenants' | 'deliveries' | 'tasks' | 'clock'>,
  accountId: string,
  integrationId: string,
  deliveryId: string,
): Promise<DeliveryRecord> {
  const integration = await integrationOf(deps, accountId, integrationId)
  const delivery = await deps.deliveries.get(deliveryId)
  if (!delivery || delivery.integration_id !== integration.id) throw new AppError('not_found')
  if (!integration.active) throw new AppError('conflict')
  return replayDelivery(deps, delivery)
}
