import type { TenantLookups } from '../../ports/tenant-lookups.ts'
import type { AccountRecord, CustomFieldDefinition } from '../../model/records.ts'

export interface AccountContactContext {
  definitions: CustomFieldDefinition[]
  mappedCustomFieldKeys: Set<string>
}

/**
 * What assembling a Contact needs to know about the account beyond the record: its custom
 * field definitions and which of them some connection maps inbound data to (`unmapped`).
 * `reads`: the cached lookups when serving traffic, the store itself for a management action.
 */
export async function loadAccountContactContext(
  reads: Pick<TenantLookups, 'listCustomFields' | 'listConnections'>,
  account: Pick<AccountRecord, 'id'>,
): Promise<AccountContactContext> {
  const [definitions, connections] = await Promise.all([reads.listCustomFields(account.id), reads.listConnections(account.id)])
  const mapped = new Set<string>()
  for (const c of connections) {
    for (const m of c.field_mappings ?? []) {
      if (m.to.startsWith('custom_fields.')) mapped.add(m.to.slice('custom_fields.'.length))
    }
  }
  return { definitions, mappedCustomFieldKeys: mapped }
}
