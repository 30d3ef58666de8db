import { AppError, type ValidationIssue } from '../../errors/app-error.ts'
import type { ConnectionView, CreateConnectionBody, CreatedConnection, UpdateConnectionBody } from '../../contract/admin.ts'
import { getKeyPepper } from '../secrets/platform-secrets.ts'
import { generateSourceToken, hashSecret } from '../auth/hashing.ts'
import { prefixedId } from '../../model/ids.ts'
import type { ConnectionRecord, FieldMapping } from '../../model/records.ts'
import { CORE_TARGETS, normalizeKey } from '../ingest/mapping.ts'
import { invalidPayload, issue, nowIso, requireAccount, requireConnection, type TenantDeps } from './common.ts'
import { connectionView } from './views.ts'

const SOURCE_SLUG = /^[a-z0-9][a-z0-9_-]{0,63}$/
const FIXED_TARGETS = new Set<string>(CORE_TARGETS)
const CUSTOM_KEY = /^[a-z][a-z0-9_]{0,63}$/
const CUSTOM_PREFIX = 'custom_fields.'

/**
 * Field mappings as the inbound mapper reads them (`shared/src/domain/ingest/mapping.ts`): `from`
 * is compared after normalization (lower-case, letters and digits only), so a `from` without any
 * letter or digit could never match and is refused. One `from` may feed several targets. A
 * `custom_fields.<key>` target may name a definition that does not exist yet: the mapper ignores
 * it until the definition is created, so provisioning order does not matter.
 */
function validateFieldMappings(mappings: readonly FieldMapping[]): FieldMapping[] {
  const issues: ValidationIssue[] = []
  mappings.forEach((m, i) => {
    if (normalizeKey(m.from) === '')
      issues.push(issue(`/field_mappings/${i}/from`, 'no_key', 'must contain a letter or a digit (keys are compared by letters and digits only)'))
    if (m.to.startsWith(CUSTOM_PREFIX)) {
      if (!CUSTOM_KEY.test(m.to.slice(CUSTOM_PREFIX.length)))
        issues.push(issue(`/field_mappings/${i}/to`, 'pattern', 'custom field keys match ^[a-z][a-z0-9_]{0,63}$'))
    } else if (!FIXED_TARGETS.has(m.to)) {
      issues.push(issue(`/field_mappings/${i}/to`, 'enum', 'must be email, first_name, last_name, company, title, external_id or custom_fields.<key>'))
    }
  })
  if (issues.length > 0) throw invalidPayload(...issues)
  return mappings.map((m) => ({ from: m.from, to: m.to }))
}

/**
 * The `source` of the (source, external_id) anchor. A partner CRM connection always writes
 * `partnercrm`; no other connection may use that slug, so its contacts cannot be overwritten
 * from another source by accident.
 */
function sourceFor(body: CreateConnectionBody): string {
  if (body.type === 'partnercrm') {
    if (body.source !== undefined && body.source !== 'partnercrm') {
      throw invalidPayload(issue('/source', 'const', 'a partnercrm connection always has source "partnercrm"'))
    }
    return 'partnercrm'
  }
  const source = body.source ?? body.type
  if (!SOURCE_SLUG.test(source)) throw invalidPayload(issue('/source', 'pattern', 'must be a slug: lower-case letters, digits, - and _ (at most 64)'))
  if (source === 'partnercrm') throw invalidPayload(issue('/source', 'reserved', '"partnercrm" is reserved for the partnercrm connection'))
  return source
}

/**
 * `POST /api/v1/admin/accounts/{accountId}/connections`. A webhook connection gets its source
 * token here (shown once, stored only as a keyed hash). One partner CRM connection per account:
 * the edge resolves a location to the account's partner CRM connection, so a second one would be
 * ambiguous (409 `conflict`).
 */
export async function createConnection(deps: TenantDeps, accountId: string, body: CreateConnectionBody): Promise<CreatedConnection> {
  const account = await requireAccount(deps, accountId)
  const source = sourceFor(body)
  const mappings = validateFieldMappings(body.field_mappings ?? [])
  if (body.type === 'partnercrm') {
    const existing = (await deps.tenants.listConnections(accountId)).find((c) => c.type === 'partnercrm')
    if (existing) throw new AppError('conflict')
  }
  const now = nowIso(deps)
  let token: string | undefined
  const connection: ConnectionRecord = {
    id: prefixedId('src'),
    account_id: accountId,
    type: body.type,
    source,
    name: body.name ?? null,
    active: true,
    field_mappings: mappings,
    token_hashes: [],
    created_at: now,
    updated_at: now,
  }
  if (body.type === 'webhook') {
    token = generateSourceToken()
    connection.token_hashes = [{ hash: hashSecret(await getKeyPepper(deps), token), expires_at: null }]
  }
  await deps.tenants.createConnection(connection)
  return { ...connectionView(deps.config, account, connection), ...(token !== undefined ? { token } : {}) }
}

/**
 * `PATCH …/connections/{connectionId}`: `type` and `source` are fixed at creation (the anchor).
 * `require_token` is the per-connection cutover of the partner CRM webhook (contract 5.8): only a
 * partnercrm connection has it (400 on another type).
 */
export async function updateConnection(deps: TenantDeps, accountId: string, connectionId: string, body: UpdateConnectionBody): Promise<ConnectionView> {
  const account = await requireAccount(deps, accountId)
  const connection = await requireConnection(deps, accountId, connectionId)
  if (body.require_token !== undefined && connection.type !== 'partnercrm') {
    throw invalidPayload(issue('/require_token', 'type', 'only a partnercrm connection has require_token'))
  }
  const mappings = body.field_mappings !== undefined ? validateFieldMappings(body.field_mappings) : undefined
  const updated = await deps.tenants.updateConnection(connectionId, {
    ...(body.active !== undefined ? { active: body.active } : {}),
    ...(body.require_token !== undefined ? { require_token: body.require_token } : {}),
    ...(mappings !== undefined ? { field_mappings: mappings } : {}),
    ...(body.name !== undefined ? { name: body.name } : {}),
    updated_at: nowIso(deps),
  })
  if (!updated) throw new AppError('not_found')
  return connectionView(deps.config, account, updated)
}

export async function getConnection(deps: TenantDeps, accountId: string, connectionId: string): Promise<ConnectionView> {
  const account = await requireAccount(deps, accountId)
  return connectionView(deps.config, account, await requireConnection(deps, accountId, connectionId))
}

export async function listConnections(deps: TenantDeps, accountId: string): Promise<{ data: ConnectionView[] }> {
  const account = await requireAccount(deps, accountId)
  const rows = await deps.tenants.listConnections(accountId)
  return { data: rows.map((c) => connectionView(deps.config, account, c)) }
}
