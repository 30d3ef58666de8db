import { expect } from 'vitest'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { authenticateApiKey } from '@lsv/shared/domain/auth/authenticate-api-key.ts'
import { verifyLocationToken, verifySourceToken } from '@lsv/shared/domain/auth/verify-source-token.ts'
import { hashSecret } from '@lsv/shared/domain/auth/hashing.ts'
import { getKeyPepper } from '@lsv/shared/domain/secrets/platform-secrets.ts'
import { CUSTOM_FIELD_TYPES } from '@lsv/shared/model/records.ts'
import { randomSuffix } from '../helpers/embedded.ts'
import { ADMIN, ok } from './harness.ts'

export interface Provisioned {
  accountId: string
  publicId: string
  apiConnectionId: string
  webhookConnectionId: string
  partnerConnectionId: string
  keyId: string
  key: string
  sourceToken: string
  locationId: string
  locationToken: string
  integrationId: string
  signingSecret: string
}

/**
 * Provisions one complete tenant through the management API only, checking every answer and
 * that each issued credential works against the stored state. Runs on any backend.
 */
export async function provisionEndToEnd(app: App, deps: PlatformDeps): Promise<Provisioned> {
  const publicId = `mgmt-${randomSuffix(5)}`
  const account = await ok(app, 201, 'POST', ADMIN, { public_id: publicId, name: 'Acme' })
  expect(account).toMatchObject({ public_id: publicId, name: 'Acme', active: true, api_access: true, permitted_tiers: [1, 2, 3], authorized_domains: [] })
  expect(account.id).toMatch(/^[0-9a-f-]{36}$/)
  const accountId = account.id as string
  const base = `${ADMIN}/${accountId}`

  expect(await ok(app, 200, 'PATCH', base, { permitted_tiers: [1, 2] })).toMatchObject({ permitted_tiers: [1, 2], active: true })
  expect(await ok(app, 200, 'GET', base)).toMatchObject({ id: accountId, permitted_tiers: [1, 2] })

  const domains = await ok(app, 200, 'PUT', `${base}/authorized-domains`, { domains: ['Example.COM.', 'shop.example.com', 'example.com'] })
  expect(domains).toEqual({ domains: ['example.com', 'shop.example.com'] })

  for (const type of CUSTOM_FIELD_TYPES) {
    const field = await ok(app, 201, 'POST', `${base}/custom-fields`, { key: `f_${type}`, label: `Field ${type}`, type })
    expect(field).toMatchObject({ key: `f_${type}`, label: `Field ${type}`, type })
  }
  expect((await ok(app, 200, 'GET', `${base}/custom-fields`)).data).toHaveLength(CUSTOM_FIELD_TYPES.length)

  // api connection + key
  const api = await ok(app, 201, 'POST', `${base}/connections`, {
    type: 'api',
    source: 'crm',
    field_mappings: [
      { from: 'E-Mail', to: 'email' },
      { from: 'plan', to: 'custom_fields.f_text' },
    ],
  })
  expect(api).toMatchObject({
    type: 'api',
    source: 'crm',
    active: true,
    field_mappings: [
      { from: 'E-Mail', to: 'email' },
      { from: 'plan', to: 'custom_fields.f_text' },
    ],
  })
  expect(api).not.toHaveProperty('token')
  expect(api).not.toHaveProperty('webhook_url')
  const created = await ok(app, 201, 'POST', `${base}/connections/${api.id}/keys`, { scopes: ['contacts:write', 'contacts:links:write'], name: 'ci' })
  expect(created.key).toMatch(/^lsk_[A-Za-z0-9_-]{43}$/)
  expect(created).toMatchObject({
    scopes: ['contacts:write', 'contacts:links:write'],
    expires_at: null,
    revoked_at: null,
    name: 'ci',
    prefix: created.key.slice(0, 12),
  })
  const stored = await deps.tenants.getApiKey(created.id)
  expect(stored?.hash).toBe(hashSecret(await getKeyPepper(deps), created.key))
  expect(JSON.stringify(stored)).not.toContain(created.key)
  const auth = await authenticateApiKey(deps, { authorization: `Bearer ${created.key}` }, { scope: 'contacts:links:write' })
  expect(auth.account.id).toBe(accountId)
  expect(auth.connection.id).toBe(api.id)

  // webhook connection: token shown once, URL on the account's edge host
  const webhook = await ok(app, 201, 'POST', `${base}/connections`, { type: 'webhook' })
  expect(webhook).toMatchObject({ type: 'webhook', source: 'webhook' })
  expect(webhook.token).toMatch(/^lst_/)
  expect(webhook.webhook_url).toBe(`${deps.config.edgeBaseUrlTemplate.replace('{public_id}', publicId)}/v1/contacts/${webhook.id}`)
  const webhookRecord = (await deps.tenants.getConnection(webhook.id))!
  expect(await verifySourceToken(deps, webhookRecord, webhook.token)).toBe(true)
  expect(JSON.stringify(webhookRecord)).not.toContain(webhook.token)
  const readBack = await ok(app, 200, 'GET', `${base}/connections/${webhook.id}`)
  expect(readBack).not.toHaveProperty('token')
  expect(readBack.webhook_url).toBe(webhook.webhook_url)

  // partner CRM connection + location
  const partner = await ok(app, 201, 'POST', `${base}/connections`, { type: 'partnercrm' })
  expect(partner).toMatchObject({ type: 'partnercrm', source: 'partnercrm' })
  const locationId = `loc-${randomSuffix(4)}`
  const location = await ok(app, 201, 'POST', `${base}/connections/${partner.id}/locations`, { location_id: locationId })
  expect(location).toMatchObject({
    location_id: locationId,
    active: true,
    webhook_url: `${deps.config.edgeBaseUrlTemplate.replace('{public_id}', publicId)}/v1/contacts/partnercrm`,
  })
  expect(location.token).toMatch(/^lst_/)
  const locationRecord = (await deps.tenants.getLocation(accountId, locationId))!
  expect(await verifyLocationToken(deps, locationRecord, location.token)).toBe(true)
  expect(JSON.stringify(locationRecord)).not.toContain(location.token)

  expect((await ok(app, 200, 'GET', `${base}/connections`)).data.map((c: { id: string }) => c.id).sort()).toEqual([api.id, webhook.id, partner.id].sort())

  // integration: the signing secret is shown at creation only
  const integration = await ok(app, 201, 'POST', `${base}/integrations`, {
    url: 'https://hooks.example.com/lsv',
    payload_version: 2,
    tiers: { contact_handles: true },
  })
  expect(integration).toMatchObject({
    url: 'https://hooks.example.com/lsv',
    payload_version: 2,
    tiers: { contact_handles: true, sensitive_traits: false },
    active: true,
  })
  expect(integration.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
  const patched = await ok(app, 200, 'PATCH', `${base}/integrations/${integration.id}`, { tiers: { contact_handles: false }, payload_version: 1 })
  expect(patched).toMatchObject({ payload_version: 1, tiers: { contact_handles: false, sensitive_traits: false } })
  expect(patched).not.toHaveProperty('signing_secret')
  expect(await ok(app, 200, 'GET', `${base}/integrations/${integration.id}/deliveries`)).toMatchObject({ data: [], has_more: false })

  return {
    accountId,
    publicId,
    apiConnectionId: api.id,
    webhookConnectionId: webhook.id,
    partnerConnectionId: partner.id,
    keyId: created.id,
    key: created.key,
    sourceToken: webhook.token,
    locationId,
    locationToken: location.token,
    integrationId: integration.id,
    signingSecret: integration.signing_secret,
  }
}
