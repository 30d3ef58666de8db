import { AppError, type ValidationIssue } from '../../errors/app-error.ts'
import { atMostCodePoints } from '../../lib/code-points.ts'
import {
  INTEGRATION_DESCRIPTION_MAX,
  INTEGRATION_NAME_MAX,
  type CreateIntegrationBody,
  type CreatedIntegration,
  type IntegrationView,
  type UpdateIntegrationBody,
} from '../../contract/admin.ts'
import { checkUrlStatically } from '../webhooks/ssrf.ts'
import { generateSigningSecret } from '../webhooks/signing.ts'
import { prefixedId } from '../../model/ids.ts'
import type { AccountRecord, IntegrationRecord } from '../../model/records.ts'
import { invalidPayload, issue, nowIso, requireAccount, type TenantDeps } from './common.ts'
import { integrationView } from './views.ts'

type Tiers = IntegrationRecord['tiers']

/**
 * The destination checks that need no network (scheme, credentials, IP literals and obviously
 * internal names: the same rules as at send time). DNS is not consulted here: a name's addresses
 * can change, so the dispatcher checks them on every delivery anyway.
 */
function checkedUrl(deps: TenantDeps, raw: string): string {
  const check = checkUrlStatically(raw, deps.config.allowLoopbackWebhooks)
  if (!check.ok) throw invalidPayload(issue('/url', 'destination', check.reason))
  return new URL(raw).href
}

/** A tier can be enabled only when the account's plan permits it (tier 2: handles, tier 3: traits). */
function checkTiers(account: AccountRecord, tiers: Tiers): void {
  const issues: ValidationIssue[] = []
  if (tiers.contact_handles && !account.permitted_tiers.includes(2))
    issues.push(issue('/tiers/contact_handles', 'tier_not_permitted', 'tier 2 is not permitted for this account'))
  if (tiers.sensitive_traits && !account.permitted_tiers.includes(3))
    issues.push(issue('/tiers/sensitive_traits', 'tier_not_permitted', 'tier 3 is not permitted for this account'))
  if (issues.length > 0) throw invalidPayload(...issues)
}

async function requireIntegration(deps: TenantDeps, accountId: string, integrationId: string): Promise<IntegrationRecord> {
  const integration = await deps.tenants.getIntegration(integrationId)
  // another account's integration is indistinguishable from a missing one
  if (!integration || integration.account_id !== accountId) throw new AppError('not_found')
  return integration
}

/**
 * A label or note as stored: trimmed, an empty one is none (null). Bounded here too, not only by
 * the API's schema: the portal's forms call these functions directly. Characters are code points,
 * as the schema's `maxLength` counts them: a name the schema lets through is not refused here.
 */
function words(value: string | null | undefined, field: 'name' | 'description'): string | null {
  const trimmed = value?.trim()
  if (!trimmed) return null
  const max = field === 'name' ? INTEGRATION_NAME_MAX : INTEGRATION_DESCRIPTION_MAX
  if (!atMostCodePoints(trimmed, max)) throw invalidPayload(issue(`/${field}`, 'too_long', `the ${field} has at most ${max} characters`))
  return trimmed
}

/** `POST /api/v1/admin/accounts/{accountId}/integrations`: the signing secret is in this response only. */
export async function createIntegration(deps: TenantDeps, accountId: string, body: CreateIntegrationBody): Promise<CreatedIntegration> {
  const account = await requireAccount(deps, accountId)
  const url = checkedUrl(deps, body.url)
  const tiers: Tiers = { contact_handles: body.tiers?.contact_handles ?? false, sensitive_traits: body.tiers?.sensitive_traits ?? false }
  checkTiers(account, tiers)
  const now = nowIso(deps)
  const secret = generateSigningSecret()
  const integration: IntegrationRecord = {
    id: prefixedId('int'),
    account_id: accountId,
    url,
    payload_version: body.payload_version,
    tiers,
    active: true,
    disabled_reason: null,
    signing_secrets: [{ secret, created_at: now, expires_at: null }],
    name: words(body.name, 'name'),
    description: words(body.description, 'description'),
    created_at: now,
    updated_at: now,
  }
  await deps.tenants.createIntegration(integration)
  return { ...integrationView(integration), signing_secret: secret }
}

/**
 * `PATCH …/integrations/{integrationId}`: `tiers` members given replace the current ones;
 * `active: true` also clears the reason the platform disabled it. The signing secret is unchanged.
 */
export async function updateIntegration(deps: TenantDeps, accountId: string, integrationId: string, body: UpdateIntegrationBody): Promise<IntegrationView> {
  const account = await requireAccount(deps, accountId)
  const current = await requireIntegration(deps, accountId, integrationId)
  const url = body.url !== undefined ? checkedUrl(deps, body.url) : undefined
  let tiers: Tiers | undefined
  if (body.tiers !== undefined) {
    tiers = {
      contact_handles: body.tiers.contact_handles ?? current.tiers.contact_handles,
      sensitive_traits: body.tiers.sensitive_traits ?? current.tiers.sensitive_traits,
    }
    checkTiers(account, { contact_handles: body.tiers.contact_handles === true, sensitive_traits: body.tiers.sensitive_traits === true })
  }
  const updated = await deps.tenants.updateIntegration(integrationId, {
    ...(url !== undefined ? { url } : {}),
    ...(body.payload_version !== undefined ? { payload_version: body.payload_version } : {}),
    ...(tiers !== undefined ? { tiers } : {}),
    ...(body.name !== undefined ? { name: words(body.name, 'name') } : {}),
    ...(body.description !== undefined ? { description: words(body.description, 'description') } : {}),
    ...(body.active !== undefined ? { active: body.active, ...(body.active ? { disabled_reason: null } : {}) } : {}),
    updated_at: nowIso(deps),
  })
  if (!updated) throw new AppError('not_found')
  return integrationView(updated)
}

export async function getIntegration(deps: TenantDeps, accountId: string, integrationId: string): Promise<IntegrationView> {
  await requireAccount(deps, accountId)
  return integrationView(await requireIntegration(deps, accountId, integrationId))
}

export async function listIntegrations(deps: TenantDeps, accountId: string): Promise<{ data: IntegrationView[] }> {
  await requireAccount(deps, accountId)
  return { data: (await deps.tenants.listIntegrations(accountId)).map(integrationView) }
}

/**
 * `DELETE …/integrations/{integrationId}`: the integration is removed; its delivery log stays
 * until it ages out (DELIVERY_RETENTION_MS). Deliveries still queued for it find no integration
 * and end as `failed` on their next attempt without a request (domain/webhooks/deliver.ts), so
 * nothing retries forever. Returns what was deleted (the caller's audit entry names it).
 */
export async function deleteIntegration(deps: TenantDeps, accountId: string, integrationId: string): Promise<IntegrationView> {
  await requireAccount(deps, accountId)
  await requireIntegration(deps, accountId, integrationId)
  const deleted = await deps.tenants.deleteIntegration(integrationId)
  if (!deleted) throw new AppError('not_found')
  return integrationView(deleted)
}
