import type { PlatformDeps } from '../../ports/deps.ts'
import { AppError } from '../../errors/app-error.ts'
import type { DeliveryRecord, IntegrationRecord } from '../../model/records.ts'
import { deliveryIdFor, replayDelivery, type EnqueueDeps } from './deliveries.ts'
import { TEST_EVENT_ID_PREFIX } from './test-event.ts'
import { decodeKeysetCursor, encodeKeysetCursor } from '../contacts/cursor.ts'

export type DeliveryLogEntry = Omit<DeliveryRecord, 'body' | 'account_id' | 'integration_id'>

/** The account's integration, or 404 (another account's is indistinguishable from a missing one). */
export async function integrationOf(deps: Pick<PlatformDeps, 'tenants'>, accountId: string, integrationId: string): Promise<IntegrationRecord> {
  const integration = await deps.tenants.getIntegration(integrationId)
  // another account's integration is indistinguishable from a missing one
  if (!integration || integration.account_id !== accountId) throw new AppError('not_found')
  return integration
}

export type DeliveryStatus = DeliveryRecord['status']

/**
 * Rows read per page at most when the kind or status-code filter skips rows (the page then ends
 * early, with a cursor). 250, not 1,000: at 1,000 a rare filter cost 32–41 ms at p50 on
 * bench:portal's 100,000 deliveries (docs/portal.md "Speed"); a short page with Older costs the
 * tenant one click. The status filter is the store's (an index), so it never counts here.
 */
const FILTER_SCAN_LIMIT = 250

/** Test events (`sendTestEvent`) or the deliveries of real visits. */
export type DeliveryKind = 'test' | 'real'

/**
 * The HTTP status of a delivery's last attempt: a class (`2xx`…`5xx`), one exact code, or
 * `none` (no answer: a transport error, or not attempted yet).
 */
export type StatusCodeFilter = '1xx' | '2xx' | '3xx' | '4xx' | '5xx' | 'none' | number

/** What a page of the log is narrowed to; every filter given must hold. */
export interface DeliveryLogFilter {
  status?: DeliveryStatus | undefined
  kind?: DeliveryKind | undefined
  /** one event: at most one delivery per integration (its id is derived from the event id) */
  eventId?: string | undefined
  statusCode?: StatusCodeFilter | undefined
  /** created at or after this instant (ISO 8601); the store narrows by it (an index range) */
  from?: string | undefined
  /** created strictly before this instant (ISO 8601) */
  to?: string | undefined
}

function codeMatches(filter: StatusCodeFilter, row: DeliveryRecord): boolean {
  const code = row.attempts.at(-1)?.status_code ?? null
  if (filter === 'none') return code === null
  if (typeof filter === 'number') return code === filter
  return code !== null && Math.floor(code / 100) === Number(filter[0])
}

const inTimeRange = (filter: DeliveryLogFilter, row: DeliveryRecord) =>
  (filter.from === undefined || row.created_at >= filter.from) && (filter.to === undefined || row.created_at < filter.to)

type DeliveryLogPage = { object: 'list'; data: DeliveryLogEntry[]; has_more: boolean; next_cursor: string | null }

const entryOf = ({ body: _b, account_id: _a, integration_id: _i, ...entry }: DeliveryRecord): DeliveryLogEntry => entry

/**
 * The row test of the kind and status-code filters (neither is indexed); null when neither is set
 * (every row is kept). The status and the time range are the store's (its indexes), not row tests.
 */
function keepOf(filter: DeliveryLogFilter): ((row: DeliveryRecord) => boolean) | null {
  const { kind, statusCode } = filter
  if (kind === undefined && statusCode === undefined) return null
  return (row) =>
    (kind === undefined || row.event_id.startsWith(TEST_EVENT_ID_PREFIX) === (kind === 'test')) && (statusCode === undefined || codeMatches(statusCode, row))
}

/**
 * One page of the delivery log, newest first; bodies are not listed (they stay for replay). With
 * `from` / `to`, the store lists that range of creation times only, and with `status` only the
 * deliveries in that status (both served by its indexes: full pages, however rare the status).
 * With `kind` or `statusCode`, only the matching deliveries: rows (of the status, when one is
 * given) are read in store pages and filtered, at most FILTER_SCAN_LIMIT per answer, so a rare
 * match answers a short page with a cursor to go on.
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
    const found =
      row !== null &&
      row.integration_id === integrationId &&
      row.event_id === options.eventId &&
      inTimeRange(options, row) &&
      (options.status === undefined || row.status === options.status) &&
      (keep === null || keep(row))
    return { object: 'list', data: found ? [entryOf(row)] : [], has_more: false, next_cursor: null }
  }
  let before = decodeKeysetCursor('d1', options.cursor)
  const page: DeliveryRecord[] = []
  let hasMore = false
  let scanned = 0
  let lastSeen: string | undefined
  for (;;) {
    const chunk = keep === null ? options.limit + 1 : Math.min(FILTER_SCAN_LIMIT - scanned, 100) + 1
    const rows = await deps.deliveries.list(integrationId, {
      ...(before ? { before } : {}),
      ...(options.from ? { createdFrom: options.from } : {}),
      ...(options.to ? { createdBefore: options.to } : {}),
      ...(options.status ? { status: options.status } : {}),
      limit: chunk,
    })
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
  deps: EnqueueDeps & Pick<PlatformDeps, 'deliveries'>,
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

/** One delivery of the account's integration, with its body (the delivery debugger shows the bytes). */
export async function getDeliveryFor(
  deps: Pick<PlatformDeps, 'tenants' | 'deliveries'>,
  accountId: string,
  integrationId: string,
  deliveryId: string,
): Promise<{ integration: IntegrationRecord; delivery: DeliveryRecord }> {
  const integration = await integrationOf(deps, accountId, integrationId)
  const delivery = await deps.deliveries.get(deliveryId)
  if (!delivery || delivery.integration_id !== integration.id) throw new AppError('not_found')
  return { integration, delivery }
}
