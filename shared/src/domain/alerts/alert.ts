import { createHash } from 'node:crypto'
import type { PlatformConfig } from '../../config/config.ts'
import type { IntegrationRecord } from '../../model/records.ts'
import type { EndpointHealthChanged } from '../../ports/listeners.ts'
import { ENDPOINT_ALERT_VERSION, type EndpointAlert } from '../../contract/endpoint-alert.ts'
import { redactReceiverUrl, redactText } from '../../logging/redact.ts'

/**
 * The alert's id: a hash of its type, the endpoint and the instant that names the change (the
 * streak's start, the time of the 410). The same change observed twice is the same id, hence
 * one delivery (deliveryIdFor is deterministic) and, for a receiver that dedupes on
 * `webhook-id`, one alert.
 */
function alertId(type: string, endpointId: string, instant: string): string {
  return `alrt_${createHash('sha256').update(`${type}\u0000${endpointId}\u0000${instant}`).digest('base64url').slice(0, 32)}`
}

/** The endpoint's page on the portal (services/portal-api/src/portal/screens-webhooks). */
const endpointPortalUrl = (config: Pick<PlatformConfig, 'portalBaseUrl'>, endpointId: string): string =>
  `${config.portalBaseUrl}/portal/webhooks/${encodeURIComponent(endpointId)}`

function endpointOf(e: Pick<IntegrationRecord, 'id' | 'url' | 'name'>) {
  // the query and userinfo may hold the receiver's own token: the same redaction as every sink
  return { id: e.id, url: redactReceiverUrl(e.url) ?? '', name: e.name ?? null }
}

/** The alert that tells the tenant about one change of an endpoint's state. */
export function alertOf(config: Pick<PlatformConfig, 'portalBaseUrl'>, change: EndpointHealthChanged): EndpointAlert {
  const common = {
    v: ENDPOINT_ALERT_VERSION,
    occurred_at: change.at,
    account_id: change.endpoint.account_id,
    endpoint: endpointOf(change.endpoint),
    portal_url: endpointPortalUrl(config, change.endpoint.id),
    test: false,
  } as const
  switch (change.state) {
    case 'failing':
      return {
        ...common,
        id: alertId('endpoint.failing', change.endpoint.id, change.since),
        type: 'endpoint.failing',
        since: change.since,
        consecutive_failures: change.consecutiveFailures,
        threshold: change.threshold,
        // an error text can name a URL: the redaction policy of every sink
        last_error: change.lastError ? redactText(change.lastError).slice(0, 512) : null,
      }
    case 'disabled':
      return { ...common, id: alertId('endpoint.disabled', change.endpoint.id, change.at), type: 'endpoint.disabled', since: change.at, reason: change.reason }
    case 'recovered':
      return { ...common, id: alertId('endpoint.recovered', change.endpoint.id, change.since), type: 'endpoint.recovered', since: change.since }
  }
}
