import type { PlatformConfig } from '../../config/config.ts'
import { edgeBaseUrlFor } from '../../config/config.ts'
import type { AccountView, ApiKeyView, ConnectionView, CustomFieldView, IntegrationView } from '../../contract/admin.ts'
import type { AccountRecord, ApiKeyRecord, ConnectionRecord, CustomFieldDefinition, IntegrationRecord } from '../../model/records.ts'

/**
 * Record -> wire shape. Views never carry a hash or a secret: the only places a key, token or
 * signing secret leaves the service are the create/rotate functions, which add it explicitly.
 */

type EdgeConfig = Pick<PlatformConfig, 'edgeBaseUrlTemplate'>

export function sourceWebhookUrl(config: EdgeConfig, account: Pick<AccountRecord, 'public_id'>, connectionId: string): string {
  return `${edgeBaseUrlFor(config, account.public_id)}/v1/contacts/${encodeURIComponent(connectionId)}`
}

export function partnerCrmWebhookUrl(config: EdgeConfig, account: Pick<AccountRecord, 'public_id'>): string {
  return `${edgeBaseUrlFor(config, account.public_id)}/v1/contacts/partnercrm`
}

export function accountView(config: EdgeConfig, a: AccountRecord): AccountView {
  return {
    id: a.id,
    public_id: a.public_id,
    name: a.name,
    active: a.active,
    api_access: a.api_access,
    permitted_tiers: [...a.permitted_tiers],
    authorized_domains: [...a.authorized_domains],
    portal_frame_ancestors: [...(a.portal_frame_ancestors ?? [])],
    edge_base_url: edgeBaseUrlFor(config, a.public_id),
    created_at: a.created_at,
    updated_at: a.updated_at,
  }
}

export function connectionView(config: EdgeConfig, account: AccountRecord, c: ConnectionRecord): ConnectionView {
  return {
    id: c.id,
    type: c.type,
    source: c.source,
    name: c.name,
    active: c.active,
    field_mappings: c.field_mappings.map((m) => ({ from: m.from, to: m.to })),
    ...(c.type === 'webhook' ? { webhook_url: sourceWebhookUrl(config, account, c.id) } : {}),
    ...(c.type === 'partnercrm' ? { require_token: c.require_token === true } : {}),
    created_at: c.created_at,
    updated_at: c.updated_at,
  }
}

export function apiKeyView(k: ApiKeyRecord): ApiKeyView {
  return {
    id: k.id,
    prefix: k.prefix,
    name: k.name,
    scopes: [...k.scopes],
    expires_at: k.expires_at,
    revoked_at: k.revoked_at,
    created_at: k.created_at,
  }
}

export function customFieldView(d: CustomFieldDefinition): CustomFieldView {
  return { key: d.key, label: d.label, type: d.type, created_at: d.created_at }
}

export function integrationView(i: IntegrationRecord): IntegrationView {
  return {
    id: i.id,
    url: i.url,
    payload_version: i.payload_version,
    tiers: { contact_handles: i.tiers.contact_handles, sensitive_traits: i.tiers.sensitive_traits },
    active: i.active,
    disabled_reason: i.disabled_reason,
    name: i.name ?? null,
    description: i.description ?? null,
    failing: i.failing ?? null,
    created_at: i.created_at,
    updated_at: i.updated_at,
  }
}
