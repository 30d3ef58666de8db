import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { AccountRecord, ApiKeyRecord, ConnectionRecord, IntegrationRecord } from '@lsv/shared/model/records.ts'
import { readPushActivity } from '@lsv/shared/domain/activity/counts.ts'
import { readRecentPushes } from '@lsv/shared/domain/activity/push-log.ts'

/**
 * Deliveries read per endpoint at most (newest first). The overview's delivery figures come from
 * these pages, so the page stays the same few reads with 100,000 deliveries in the log: a figure
 * from a full page is shown as "at least" (DeliveryTally.capped).
 */
export const DELIVERY_PAGE = 50
/** Endpoints whose deliveries are read at most; more are counted as endpoints, not read. */
export const ENDPOINTS_READ = 20
/** Connections whose push logs are read, at most, to say where refused pushes are (only when some were refused). */
const CONNECTIONS_READ = 20

const DAY_MS = 86_400_000
/** The push answers that stored the batch (202 queued, 200 the portal's fallback): the rest refused it. */
const ACCEPTED = new Set(['200', '202'])

interface DeliveryTally {
  succeeded: number
  failed: number
  /** pending or retrying */
  waiting: number
  /** a page was full with deliveries of the last 24 h: older ones of that day were not read */
  capped: boolean
  /** the endpoints with deliveries waiting for a retry, and how many each (of those read) */
  waitingBy: { integration: IntegrationRecord; count: number }[]
  /** the same deliveries by the hour they were created, oldest first: succeeded, and failed */
  hourly: { ok: number; failed: number }[]
}

/** What the overview shows, each part read with a bounded number of store reads. */
export interface Overview {
  /** the api connection a key is made on (the oldest active one), if any */
  apiConnection: ConnectionRecord | null
  liveKeys: number
  /** a contact is stored, or a push was accepted in the counted days */
  pushed: boolean
  integrations: IntegrationRecord[]
  /** the endpoints whose newest deliveries include a succeeded one */
  deliveredTo: string[]
  /** pushes since the start of yesterday (UTC): the activity counters are per UTC day */
  pushes: { accepted: number; refused: number; since: string }
  /**
   * the connections whose inbound debugger lists refused pushes since then, and how many (their
   * push logs are read only when the counters say some were refused)
   */
  refusedBy: { connection: ConnectionRecord; count: number }[]
  deliveries: DeliveryTally
  /** endpoints left unread (beyond ENDPOINTS_READ) */
  endpointsUnread: number
}

function isLive(key: ApiKeyRecord, nowMs: number): boolean {
  if (key.revoked_at !== null && Date.parse(key.revoked_at) <= nowMs) return false
  return key.expires_at === null || Date.parse(key.expires_at) > nowMs
}

/**
 * Reads the overview of an account. Bounded: the account's connections, keys and endpoints (the
 * lists every settings screen reads), one contact (limit 1), the activity counters of a few days
 * (one read of known keys), and one page of DELIVERY_PAGE per endpoint, for ENDPOINTS_READ at most.
 */
export async function readOverview(deps: PlatformDeps, account: AccountRecord): Promise<Overview> {
  const nowMs = deps.clock.now()
  const [connections, keys, integrations, oneContact, week] = await Promise.all([
    deps.tenants.listConnections(account.id),
    deps.tenants.listApiKeys(account.id),
    deps.tenants.listIntegrations(account.id),
    deps.contacts.list(account.id, { limit: 1 }),
    // every counted day (7): "a push was accepted" must not depend on it being today
    readPushActivity(deps, account.id),
  ])
  const since = new Date(Date.parse(`${new Date(nowMs - DAY_MS).toISOString().slice(0, 10)}T00:00:00Z`)).toISOString()
  const pushes = { accepted: 0, refused: 0, since }
  let everAccepted = false
  for (const day of week.days) {
    const recent = day.day >= since.slice(0, 10)
    for (const [status, n] of Object.entries(day.counts)) {
      if (ACCEPTED.has(status)) everAccepted = true
      if (!recent) continue
      if (ACCEPTED.has(status)) pushes.accepted += n
      else pushes.refused += n
    }
  }

  const refusedBy = pushes.refused > 0 ? await refusedByConnection(deps, connections, since) : []

  const read = integrations.slice(0, ENDPOINTS_READ)
  const pages = await Promise.all(read.map((i) => deps.deliveries.list(i.id, { limit: DELIVERY_PAGE })))
  const dayAgo = new Date(nowMs - DAY_MS).toISOString()
  const deliveries: DeliveryTally = {
    succeeded: 0,
    failed: 0,
    waiting: 0,
    capped: false,
    waitingBy: [],
    hourly: Array.from({ length: 24 }, () => ({ ok: 0, failed: 0 })),
  }
  const deliveredTo: string[] = []
  pages.forEach((page, i) => {
    if (page.some((d) => d.status === 'succeeded')) deliveredTo.push(read[i]!.id)
    const waiting = page.filter((d) => d.status === 'retrying').length
    if (waiting > 0) deliveries.waitingBy.push({ integration: read[i]!, count: waiting })
    const recent = page.filter((d) => d.created_at >= dayAgo)
    if (page.length === DELIVERY_PAGE && recent.length === page.length) deliveries.capped = true
    for (const d of recent) {
      const hour = deliveries.hourly[Math.max(0, 23 - Math.floor((nowMs - Date.parse(d.created_at)) / 3_600_000))]!
      if (d.status === 'succeeded') {
        deliveries.succeeded++
        hour.ok++
      } else if (d.status === 'failed') {
        deliveries.failed++
        hour.failed++
      } else deliveries.waiting++
    }
  })

  return {
    apiConnection: connections.find((c) => c.type === 'api' && c.active) ?? null,
    liveKeys: keys.filter((k) => isLive(k, nowMs)).length,
    pushed: oneContact.length > 0 || everAccepted,
    integrations,
    deliveredTo,
    pushes,
    refusedBy,
    deliveries,
    endpointsUnread: integrations.length - read.length,
  }
}

/** Refused pushes (any answer but 200 and 202) since `since`, per connection, from each one's push log (bounded). */
async function refusedByConnection(deps: PlatformDeps, connections: ConnectionRecord[], since: string): Promise<Overview['refusedBy']> {
  const read = connections.slice(0, CONNECTIONS_READ)
  const logs = await Promise.all(read.map((c) => readRecentPushes(deps, c.id)))
  return read
    .map((connection, i) => ({ connection, count: logs[i]!.filter((e) => e.at >= since && !ACCEPTED.has(String(e.status))).length }))
    .filter((r) => r.count > 0)
}
