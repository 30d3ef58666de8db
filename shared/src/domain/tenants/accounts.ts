import { AppError } from '../../errors/app-error.ts'
import { DuplicateError } from '../../errors/duplicate-error.ts'
import type { AccountView, CreateAccountBody, UpdateAccountBody } from '../../contract/admin.ts'
import { newId } from '../../model/ids.ts'
import type { AccountRecord, Tier } from '../../model/records.ts'
import { invalidPayload, issue, nowIso, requireAccount, type TenantDeps } from './common.ts'
import { accountView } from './views.ts'
import type { PlatformDeps } from '../../ports/deps.ts'
import { endAccountPortalSessions } from '../portal/sessions.ts'
import { checkedFrameAncestors } from './frame-ancestors.ts'

const PUBLIC_ID = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/

/** Sorted, without duplicates; tier 1 (custom fields) is always released, so it must be listed. */
function permittedTiers(tiers: readonly number[]): Tier[] {
  const set = [...new Set(tiers)].sort() as Tier[]
  if (!set.includes(1)) throw invalidPayload(issue('/permitted_tiers', 'tier_1_required', 'must include tier 1 (custom fields are always released)'))
  return set
}

/** `POST /api/v1/admin/accounts`: 409 `public_id taken` when the DNS label is in use (case-insensitively). */
export async function createAccount(deps: TenantDeps, body: CreateAccountBody): Promise<AccountView> {
  const publicId = body.public_id.toLowerCase()
  if (!PUBLIC_ID.test(publicId)) throw invalidPayload(issue('/public_id', 'pattern', 'must be a DNS label (letters, digits, inner hyphens; at most 63)'))
  const now = nowIso(deps)
  const account: AccountRecord = {
    id: newId(),
    public_id: publicId,
    name: body.name ?? null,
    active: true,
    api_access: body.api_access ?? true,
    permitted_tiers: permittedTiers(body.permitted_tiers ?? [1, 2, 3]),
    authorized_domains: [],
    portal_frame_ancestors: [],
    created_at: now,
    updated_at: now,
  }
  try {
    await deps.tenants.createAccount(account)
  } catch (err) {
    if (err instanceof DuplicateError) throw new AppError('public_id_taken', { cause: err })
    throw err
  }
  return accountView(deps.config, account)
}

/**
 * `PATCH /api/v1/admin/accounts/{accountId}`. `public_id` cannot change: it is baked into every
 * edge URL a tenant has configured in its systems. Deactivating ends the account's portal
 * sessions (a session never outlives a deactivated account; reactivating revives none).
 */
export async function updateAccount(deps: TenantDeps & Pick<PlatformDeps, 'portalAccess'>, accountId: string, body: UpdateAccountBody): Promise<AccountView> {
  await requireAccount(deps, accountId)
  const updated = await deps.tenants.updateAccount(accountId, {
    ...(body.active !== undefined ? { active: body.active } : {}),
    ...(body.api_access !== undefined ? { api_access: body.api_access } : {}),
    ...(body.permitted_tiers !== undefined ? { permitted_tiers: permittedTiers(body.permitted_tiers) } : {}),
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.portal_frame_ancestors !== undefined ? { portal_frame_ancestors: checkedFrameAncestors(body.portal_frame_ancestors) } : {}),
    updated_at: nowIso(deps),
  })
  if (!updated) throw new AppError('not_found')
  if (body.active === false) await endAccountPortalSessions(deps, accountId)
  return accountView(deps.config, updated)
}

export async function getAccount(deps: TenantDeps, accountId: string): Promise<AccountView> {
  return accountView(deps.config, await requireAccount(deps, accountId))
}

/** Keyset page of all accounts ordered by id (`after`: the last id of the previous page). */
export async function listAccounts(deps: TenantDeps, options: { after?: string; limit: number }): Promise<{ data: AccountView[]; next_after: string | null }> {
  const rows = await deps.tenants.listAccounts({ ...(options.after ? { after: options.after } : {}), limit: options.limit + 1 })
  const page = rows.slice(0, options.limit)
  return {
    data: page.map((a) => accountView(deps.config, a)),
    next_after: rows.length > options.limit ? page[page.length - 1]!.id : null,
  }
}
