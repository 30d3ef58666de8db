/**
 * The access changes that must be in force on every instance when the management call returns
 * (issue 20 item 6), as calls and pushes any client can make: the in-process two-instance test
 * (in-force-on-return.test.ts) drives them with `inject`, the black-box suite on both stacks
 * (test/blackbox/stacks.test.ts) over HTTP. Each removal has its restore counterpart (a restore
 * undoes what `setup` removed,
 * through the same management API, before the instance under test reads it into its cache).
 */
import { randomSuffix } from '../helpers/embedded.ts'
import { ADMIN } from '../management/harness.ts'
import type { TenantSpec } from '../helpers/tenant.ts'

/** what a case needs of a tenant: ids and credentials, however it was made */
export interface CaseTenant {
  accountId: string
  apiConnectionId: string
  key: string
  webhookConnectionId: string
  sourceToken: string
  partnerConnectionId: string
  locationId: string
  locationToken: string
}

/** one management call: answers its status and JSON body */
export type Admin = (method: 'PATCH' | 'DELETE' | 'POST', url: string, payload?: object) => Promise<{ status: number; body: any }>

/** one push to an edge of the tenant: path under the edge host, headers, JSON body; answers the status */
export type Push = (path: string, headers: Record<string, string>, payload: object) => Promise<number>

export interface AccessChange {
  name: string
  /** the parts of the tenant the case uses (each further connection or location is one more settled write to make) */
  spec: TenantSpec
  /** management calls made (and in force) before the instance under test warms its cache */
  setup?: (admin: Admin, t: CaseTenant) => Promise<void>
  /** the management call under test */
  change: (admin: Admin, t: CaseTenant) => Promise<void>
  /** the push whose answer the change decides */
  push: (push: Push, t: CaseTenant) => Promise<number>
  /** its answer before the change, and once the change is in force */
  was: number
  becomes: number
}

const contact = () => ({ contacts: [{ external_id: `ext-${randomSuffix(4)}`, email: 'someone@example.com' }] })
const apiPush = (push: Push, t: CaseTenant) => push('/v1/contacts', { authorization: `Bearer ${t.key}` }, contact())
const webhookPush = (push: Push, t: CaseTenant) => push(`/v1/contacts/${t.webhookConnectionId}`, { 'x-webhook-token': t.sourceToken }, contact())
/** with the location's token, or (null) without any token: accepted before the tokenized-URL cutover, found by the body's location */
const partnerPush = (push: Push, t: CaseTenant, token: string | null) =>
  push('/v1/contacts/partnercrm', token === null ? {} : { 'x-webhook-token': token }, {
    contactId: `pc-${randomSuffix(4)}`,
    locationId: t.locationId,
    email: 'someone@example.com',
  })

async function expectOk(admin: Admin, method: 'PATCH' | 'DELETE' | 'POST', url: string, payload?: object): Promise<any> {
  const res = await admin(method, url, payload)
  if (res.status >= 300) throw new Error(`${method} ${url} -> ${res.status} ${JSON.stringify(res.body)}`)
  return res.body
}

const ONLY: TenantSpec = { authorizedDomains: [], api: false, webhook: false, partner: false }
const API: TenantSpec = { ...ONLY, api: {} }
const WEBHOOK: TenantSpec = { ...ONLY, webhook: {} }
const PARTNER: TenantSpec = { ...ONLY, partner: {} }

const account = (t: CaseTenant) => `${ADMIN}/${t.accountId}`
const location = (t: CaseTenant) => `${ADMIN}/${t.accountId}/connections/${t.partnerConnectionId}/locations`

export const ACCESS_CHANGES: AccessChange[] = [
  {
    name: 'API access turned off: a key of the account is 403',
    spec: API,
    change: (admin, t) => expectOk(admin, 'PATCH', account(t), { api_access: false }),
    push: apiPush,
    was: 202,
    becomes: 403,
  },
  {
    name: 'API access turned on again: the key pushes (202)',
    spec: API,
    setup: (admin, t) => expectOk(admin, 'PATCH', account(t), { api_access: false }),
    change: (admin, t) => expectOk(admin, 'PATCH', account(t), { api_access: true }),
    push: apiPush,
    was: 403,
    becomes: 202,
  },
  {
    name: "a deleted location: its token's push is 404",
    spec: PARTNER,
    change: (admin, t) => expectOk(admin, 'DELETE', `${location(t)}/${t.locationId}`),
    push: (push, t) => partnerPush(push, t, t.locationToken),
    was: 202,
    becomes: 404,
  },
  {
    name: 'a deleted location added again: a push naming it is accepted (202)',
    spec: PARTNER,
    setup: (admin, t) => expectOk(admin, 'DELETE', `${location(t)}/${t.locationId}`),
    change: async (admin, t) => {
      const added = await expectOk(admin, 'POST', location(t), { location_id: t.locationId })
      t.locationToken = added.token
    },
    // token-less: found by the body's location id, whose removed record the instance had read
    push: (push, t) => partnerPush(push, t, null),
    was: 404,
    becomes: 202,
  },
  {
    name: 'a deactivated account: its subdomain is 404',
    spec: API,
    change: (admin, t) => expectOk(admin, 'PATCH', account(t), { active: false }),
    push: apiPush,
    was: 202,
    becomes: 404,
  },
  {
    name: 'a reactivated account: the key pushes (202)',
    spec: API,
    setup: (admin, t) => expectOk(admin, 'PATCH', account(t), { active: false }),
    change: (admin, t) => expectOk(admin, 'PATCH', account(t), { active: true }),
    push: apiPush,
    was: 404,
    becomes: 202,
  },
  {
    name: 'a deactivated webhook source: its token is 401',
    spec: WEBHOOK,
    change: (admin, t) => expectOk(admin, 'PATCH', `${account(t)}/connections/${t.webhookConnectionId}`, { active: false }),
    push: webhookPush,
    was: 202,
    becomes: 401,
  },
  {
    name: 'a reactivated webhook source: its token pushes (202)',
    spec: WEBHOOK,
    setup: (admin, t) => expectOk(admin, 'PATCH', `${account(t)}/connections/${t.webhookConnectionId}`, { active: false }),
    change: (admin, t) => expectOk(admin, 'PATCH', `${account(t)}/connections/${t.webhookConnectionId}`, { active: true }),
    push: webhookPush,
    was: 401,
    becomes: 202,
  },
]
