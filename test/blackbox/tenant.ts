/**
 * A tenant of its own on a running stack, set up only through the management API over HTTP with
 * the management tests' helpers (`ok` fails on any other status): a random public id, example.com
 * authorized, an api connection with a full key, a key without the link scope and a key of its
 * own for the rate-limit check, a webhook connection, a partner CRM location, and a v2
 * integration pointing at `receiverUrl`.
 */
import type { App } from '@lsv/shared/http/base-app.ts'
import { randomSuffix } from '../helpers/embedded.ts'
import { ADMIN, ok } from '../management/harness.ts'

export interface Tenant {
  accountId: string
  publicId: string
  apiSource: string
  key: string
  writeOnlyKey: string
  rateKey: string
  webhookId: string
  webhookUrl: string
  sourceToken: string
  locationId: string
  locationToken: string
  integrationId: string
  signingSecret: string
}

export async function setUpTenant(admin: App, receiverUrl: string): Promise<Tenant> {
  const publicId = `bb-${randomSuffix(6)}`
  const account = await ok(admin, 201, 'POST', ADMIN, { public_id: publicId, name: 'Black box' })
  const base = `${ADMIN}/${account.id as string}`
  await ok(admin, 200, 'PUT', `${base}/authorized-domains`, { domains: ['example.com'] })
  const api = await ok(admin, 201, 'POST', `${base}/connections`, { type: 'api', source: 'bb-api' })
  const keys = `${base}/connections/${api.id as string}/keys`
  const key = await ok(admin, 201, 'POST', keys, { scopes: ['contacts:write', 'contacts:links:write', 'contacts:read'] })
  const writeOnly = await ok(admin, 201, 'POST', keys, { scopes: ['contacts:write'] })
  const rate = await ok(admin, 201, 'POST', keys, { scopes: ['contacts:write'] })
  const webhook = await ok(admin, 201, 'POST', `${base}/connections`, { type: 'webhook', source: 'bb-hook' })
  const partner = await ok(admin, 201, 'POST', `${base}/connections`, { type: 'partnercrm' })
  const locationId = `loc-${randomSuffix(4)}`
  const location = await ok(admin, 201, 'POST', `${base}/connections/${partner.id as string}/locations`, { location_id: locationId })
  const integration = await ok(admin, 201, 'POST', `${base}/integrations`, { url: receiverUrl, payload_version: 2 })
  return {
    accountId: account.id, publicId, apiSource: api.source,
    key: key.key, writeOnlyKey: writeOnly.key, rateKey: rate.key,
    webhookId: webhook.id, webhookUrl: webhook.webhook_url, sourceToken: webhook.token,
    locationId, locationToken: location.token,
    integrationId: integration.id, signingSecret: integration.signing_secret,
  }
}
