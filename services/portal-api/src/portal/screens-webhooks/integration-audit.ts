import type { FastifyRequest } from 'fastify'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { IntegrationRecord } from '@lsv/shared/model/records.ts'
import { auditOf } from '../kit/audited.ts'

type Details = Record<string, string | number | boolean>

/** deps whose next write to the integration commits it with its audit entry (kit/audited.ts) */
export const auditedIntegrationChange = (
  deps: PlatformDeps,
  request: FastifyRequest,
  action: string,
  details: (written: IntegrationRecord) => Details = () => ({}),
): PlatformDeps =>
  auditOf(deps, request).change((written: IntegrationRecord) => ({ action, target: { integration_id: written.id }, details: details(written) }))

/** the audit entry of what is not a write to the integration (a secret shown, a test event queued) */
export const recordIntegrationAction = (deps: PlatformDeps, request: FastifyRequest, action: string, integrationId: string, details: Details = {}) =>
  auditOf(deps, request).record({ action, target: { integration_id: integrationId }, details })

/**
 * The endpoint's host (and port) for the audit log: what the entry is about without the rest of
 * the URL, whose path or query may carry a receiver's own token.
 */
export const hostOf = (url: string): string => new URL(url).host
