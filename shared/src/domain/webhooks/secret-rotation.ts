import { AppError } from '../../errors/app-error.ts'
import type { IntegrationRecord, SigningSecret } from '../../model/records.ts'
import { nowIso, requireAccount, type TenantDeps } from '../tenants/common.ts'
import { generateSigningSecret } from './signing.ts'

/** Default grace of a rotated signing secret: a day, like an API key's rotation. */
export const DEFAULT_SECRET_GRACE_SECONDS = 86_400

async function requireIntegration(deps: TenantDeps, accountId: string, integrationId: string): Promise<IntegrationRecord> {
  await requireAccount(deps, accountId)
  const integration = await deps.tenants.getIntegration(integrationId)
  // another account's integration is indistinguishable from a missing one
  if (!integration || integration.account_id !== accountId) throw new AppError('not_found')
  return integration
}

/**
 * The secrets after a rotation at `nowMs`: a new current secret first; every secret still signing
 * keeps signing until `now + grace` at the latest (an earlier end is kept); ended ones are dropped.
 * During the grace the dispatcher signs with all of them (space-separated `v1,` signatures, as
 * Standard Webhooks allows), so a receiver holding only the old secret still verifies.
 */
function rotatedSecrets(current: readonly SigningSecret[], nowMs: number, graceSeconds: number, fresh: string): SigningSecret[] {
  const now = new Date(nowMs).toISOString()
  const graceEndMs = nowMs + graceSeconds * 1000
  const kept = current
    .filter((s) => s.expires_at === null || Date.parse(s.expires_at) > nowMs)
    .map((s) => {
      const endMs = s.expires_at === null ? graceEndMs : Math.min(Date.parse(s.expires_at), graceEndMs)
      return { ...s, expires_at: new Date(endMs).toISOString() }
    })
    // grace 0: the old secret stops at once
    .filter((s) => Date.parse(s.expires_at) > nowMs)
  return [{ secret: fresh, created_at: now, expires_at: null }, ...kept]
}

export interface RotatedSecret {
  id: string
  signing_secret: string
  /** when the previous secret stops signing (null with a grace of 0) */
  previous_expires_at: string | null
}

/** `POST …/integrations/{integrationId}/secret/rotate`: the new secret is in this answer only. */
export async function rotateSigningSecret(
  deps: TenantDeps,
  accountId: string,
  integrationId: string,
  graceSeconds = DEFAULT_SECRET_GRACE_SECONDS,
): Promise<RotatedSecret> {
  const integration = await requireIntegration(deps, accountId, integrationId)
  const fresh = generateSigningSecret()
  const secrets = rotatedSecrets(integration.signing_secrets, deps.clock.now(), graceSeconds, fresh)
  const updated = await deps.tenants.updateIntegration(integrationId, { signing_secrets: secrets, updated_at: nowIso(deps) })
  if (!updated) throw new AppError('not_found')
  const previous =
    secrets
      .slice(1)
      .map((s) => s.expires_at!)
      .sort()
      .at(-1) ?? null
  return { id: integrationId, signing_secret: fresh, previous_expires_at: previous }
}

/** The latest end of a previous secret's grace still running at `nowMs` (null: only the current one signs). */
function previousExpiresAt(integration: IntegrationRecord, current: SigningSecret, nowMs: number): string | null {
  const graces = integration.signing_secrets.filter((s) => s !== current && s.expires_at !== null && Date.parse(s.expires_at) > nowMs).map((s) => s.expires_at!)
  return graces.sort().at(-1) ?? null
}

const currentOf = (integration: IntegrationRecord): SigningSecret | undefined =>
  integration.signing_secrets.find((s) => s.expires_at === null) ?? integration.signing_secrets[0]

/**
 * The current signing secret, for the portal's "reveal" (a signed-in tenant owns it; the
 * management API shows it on create and rotate only). The caller records the reveal in the audit log.
 */
export async function currentSigningSecret(
  deps: TenantDeps,
  accountId: string,
  integrationId: string,
): Promise<{ secret: string; created_at: string; previous_expires_at: string | null }> {
  const integration = await requireIntegration(deps, accountId, integrationId)
  const current = currentOf(integration)
  if (!current) throw new AppError('not_found')
  return { secret: current.secret, created_at: current.created_at, previous_expires_at: previousExpiresAt(integration, current, deps.clock.now()) }
}

/**
 * Until when a previous secret still signs beside the current one (a rotation's grace), or null:
 * what the webhook's page says next to its "End it now". Read from the record the caller has
 * (the page: the cached lookup the dispatcher signs from too), so it costs no read of its own.
 */
export function secretGraceEndOf(integration: IntegrationRecord, nowMs: number): string | null {
  const current = currentOf(integration)
  return current ? previousExpiresAt(integration, current, nowMs) : null
}

/**
 * Ends a rotation's grace now: only the current secret signs from the next attempt on (the
 * dispatcher reads the secrets per attempt). Returns whether a previous secret was still signing;
 * with none, nothing is written (so an audited call records nothing either).
 */
export async function endSecretGrace(deps: TenantDeps, accountId: string, integrationId: string): Promise<{ ended: boolean }> {
  const integration = await requireIntegration(deps, accountId, integrationId)
  const current = currentOf(integration)
  if (!current || previousExpiresAt(integration, current, deps.clock.now()) === null) return { ended: false }
  const updated = await deps.tenants.updateIntegration(integrationId, { signing_secrets: [current], updated_at: nowIso(deps) })
  if (!updated) throw new AppError('not_found')
  return { ended: true }
}
