import type { IntegrationRecord } from '../model/records.ts'

/**
 * Where a delivery goes, by the delivery's integration id: a tenant integration (through the
 * cached tenant lookups) or the operator's endpoint for operational events. One lookup, composed
 * at the root (platform/deps.ts), so the delivery job has no branch for the operator.
 */
export interface DeliveryTargets {
  /** the endpoint, or null when there is none (deleted; the operator's without OPERATOR_EVENTS_URL) */
  get(integrationId: string): Promise<IntegrationRecord | null>
}
