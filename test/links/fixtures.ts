import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { ContactRecord, ContactUpsertInput } from '@lsv/shared/model/records.ts'
import type { MergeFn } from '@lsv/shared/ports/contact-store.ts'
import { contactIdFor } from '@lsv/shared/model/ids.ts'
import { randomSuffix } from '../helpers/embedded.ts'

export const OPERATOR = { authorization: 'Bearer test-operator-token' }

/** Creates the record on first write, changes nothing afterwards: enough to seed contacts. */
export const seedMerge: MergeFn = (existing: ContactRecord | null, input: ContactUpsertInput, accountId: string) => {
  if (existing) return null
  return {
    id: contactIdFor(accountId, input.source, input.external_id),
    account_id: accountId,
    source: input.source,
    external_id: input.external_id,
    subject_type: 'contact',
    identity: {}, company: {}, location: {},
    business_email: null, emails: [], phones: [], traits: [], custom_fields: {},
    name_source: null, resolved_by: null,
    first_seen_at: input.at, last_seen_at: input.at, updated_at: input.at,
    versions: {},
  }
}

export async function seedContact(deps: PlatformDeps, accountId: string, source: string, externalId: string): Promise<string> {
  const [outcome] = await deps.contacts.upsertBatch(accountId, [{
    source, external_id: externalId, writer: 'manual', at: new Date(deps.clock.now()).toISOString(), origin: `seed:${externalId}`, patch: {},
  }], seedMerge)
  if (!outcome || outcome.result === 'failed') throw new Error(`seed failed: ${outcome?.error}`)
  return outcome.contactId
}

async function admin(app: App, method: 'POST' | 'PUT', url: string, payload: unknown): Promise<Record<string, unknown>> {
  const res = await app.inject({ method, url, headers: OPERATOR, payload: payload as object })
  if (res.statusCode >= 300) throw new Error(`${method} ${url} -> ${res.statusCode} ${res.body}`)
  return res.json() as Record<string, unknown>
}

export interface Tenant {
  accountId: string
  /** scopes contacts:links:write */
  linkKey: string
  /** scopes contacts:write only */
  writeKey: string
  /** created without scopes: the default */
  defaultKey: string
}

/** An account with authorized domains, an api connection and three keys, via the management API. */
export async function provisionTenant(app: App, domains: string[]): Promise<Tenant> {
  const account = await admin(app, 'POST', '/api/v1/admin/accounts', { public_id: `lnk${randomSuffix(5)}`, name: 'links test' })
  const accountId = account.id as string
  await admin(app, 'PUT', `/api/v1/admin/accounts/${accountId}/authorized-domains`, { domains })
  const connection = await admin(app, 'POST', `/api/v1/admin/accounts/${accountId}/connections`, { type: 'api', source: 'crm' })
  const keys = `/api/v1/admin/accounts/${accountId}/connections/${connection.id as string}/keys`
  const linkKey = (await admin(app, 'POST', keys, { scopes: ['contacts:links:write'] })).key as string
  const writeKey = (await admin(app, 'POST', keys, { scopes: ['contacts:write'] })).key as string
  const defaultKey = (await admin(app, 'POST', keys, {})).key as string
  return { accountId, linkKey, writeKey, defaultKey }
}

export async function removeTenant(deps: PlatformDeps, accountId: string): Promise<void> {
  await deps.contacts.deleteAccountData(accountId).catch(() => {})
  await deps.tenants.deleteAccountData(accountId).catch(() => {})
}
