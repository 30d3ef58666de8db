import { AppError } from '../../errors/app-error.ts'
import type { CreateCustomFieldBody, CustomFieldView } from '../../contract/admin.ts'
import { DuplicateError } from '../../errors/duplicate-error.ts'
import { CUSTOM_FIELD_TYPES, type CustomFieldDefinition } from '../../model/records.ts'
import { invalidPayload, issue, nowIso, requireAccount, type TenantDeps } from './common.ts'
import { customFieldView } from './views.ts'

const KEY = /^[a-z][a-z0-9_]{0,63}$/

/**
 * `POST /api/v1/admin/accounts/{accountId}/custom-fields`. Definitions are immutable once created
 * (stored values and mappings refer to the key and were written for the type): 409 `conflict` when
 * the key exists.
 */
export async function createCustomField(deps: TenantDeps, accountId: string, body: CreateCustomFieldBody): Promise<CustomFieldView> {
  await requireAccount(deps, accountId)
  if (!KEY.test(body.key)) throw invalidPayload(issue('/key', 'pattern', 'must match ^[a-z][a-z0-9_]{0,63}$'))
  if (!CUSTOM_FIELD_TYPES.includes(body.type)) throw invalidPayload(issue('/type', 'enum', `must be one of ${CUSTOM_FIELD_TYPES.join(', ')}`))
  const label = body.label.trim()
  if (label === '') throw invalidPayload(issue('/label', 'blank', 'must not be blank'))
  const definition: CustomFieldDefinition = { account_id: accountId, key: body.key, label, type: body.type, created_at: nowIso(deps) }
  try {
    await deps.tenants.createCustomField(definition)
  } catch (err) {
    if (err instanceof DuplicateError) throw new AppError('conflict', { cause: err })
    throw err
  }
  return customFieldView(definition)
}

export async function listCustomFields(deps: TenantDeps, accountId: string): Promise<{ data: CustomFieldView[] }> {
  await requireAccount(deps, accountId)
  return { data: (await deps.tenants.listCustomFields(accountId)).map(customFieldView) }
}
