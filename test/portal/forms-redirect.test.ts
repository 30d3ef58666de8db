import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LightMyRequestResponse } from 'fastify'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { createDelivery } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { createIntegration } from '@lsv/shared/domain/tenants/integrations.ts'
import { mergeContact } from '@lsv/shared/domain/contacts/merge.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { recordingQueue, type Injectable } from '../ingest/support/harness.ts'
import { mintLink, pathOf, signIn } from './support.ts'
import { formPost } from './screens-support.ts'

/**
 * Issue 22, defect 2, made structural: every POST route the portal's pages serve (fastify's own
 * route table, through the composition root's `beforeRoutes`; the pages are the routes hidden
 * from the OpenAPI description) must answer a valid submission with a redirect (303) to a portal
 * page, so a reload repeats nothing, and an invalid one with an error page (4xx HTML), never a
 * 200 page a reload would post again. A route that is neither in CASES nor in EXCEPTIONS fails
 * the first test: a form added later must say which it is.
 *
 * Mutations that fail it: any of the secret-making forms answering its page again (the key,
 * rotate, token, location, webhook, signing-secret and tracked-link forms: 200/201, not 303); a
 * new POST route registered without a case here; an invalid form answered with a redirect.
 */

/** Forms that answer a page on purpose: they change nothing, so a reload repeats nothing. */
const EXCEPTIONS: Record<string, string> = {
  'POST /portal/connections/:connectionId/preview': 'the mapping preview: runs the mapper on the sample, stores nothing',
  // issue 29, D6: test/portal/mapping-rows.test.ts holds its answers (the editor with every typed row and the sample)
  'POST /portal/connections/:connectionId/mappings/rows':
    "the mapping editor's Add a row and Remove: answer the editor again with the rows typed, store nothing",
  // multipart, which formPost does not send: test/portal/branding-logo.test.ts posts real uploads
  // and holds both answers to a 303 (a refused file is named next to the field after the redirect,
  // so a reload never uploads again)
  'POST /portal/settings/logo': 'the logo upload (multipart): its 303s, saved and refused, in branding-logo.test.ts',
}

interface Ids {
  t: StoredTenant
  deliveryId: string
  contactId: string
  cookie: string
  /** an integration of its own for the delete form (deleting the base one would empty the other cases) */
  spareIntegrationId: string
}
interface Case {
  /** the path with its ids, and a valid form */
  valid: (ids: Ids) => Promise<[string, Record<string, string>]>
  /** an invalid form (omitted when the form has no field that can be wrong) */
  invalid?: (ids: Ids) => [string, Record<string, string>]
}

const conn = (ids: Ids, tail = '') => `/portal/connections/${ids.t.apiConnectionId}${tail}`
const hook = (ids: Ids, tail = '') => `/portal/webhooks/${ids.t.integrationId}${tail}`

const CASES: Record<string, Case> = {
  'POST /portal/connections': { valid: async () => ['/portal/connections', { type: 'api' }], invalid: () => ['/portal/connections', { type: 'fax' }] },
  'POST /portal/connections/:connectionId/keys': {
    valid: async (ids) => [conn(ids, '/keys'), { scopes: 'contacts:write' }],
    invalid: (ids) => [conn(ids, '/keys'), { scopes: 'everything' }],
  },
  'POST /portal/connections/:connectionId/keys/:keyId/rotate': {
    valid: async (ids) => [conn(ids, `/keys/${ids.t.keyId}/rotate`), { grace_seconds: '60' }],
    invalid: (ids) => [conn(ids, `/keys/${ids.t.keyId}/rotate`), { grace_seconds: '-1' }],
  },
  // the question's confirmed post (without `confirm` it answers 303 to the question, a GET page)
  'POST /portal/connections/:connectionId/keys/:keyId/revoke': {
    valid: async (ids) => [conn(ids, `/keys/${ids.t.keyId}/revoke`), { grace_seconds: '600', confirm: 'yes' }],
    invalid: (ids) => [conn(ids, `/keys/${ids.t.keyId}/revoke`), { grace_seconds: '-1' }],
  },
  'POST /portal/connections/:connectionId/token/rotate': {
    valid: async (ids) => [`/portal/connections/${ids.t.webhookConnectionId}/token/rotate`, { grace_seconds: '60' }],
    invalid: (ids) => [`/portal/connections/${ids.t.webhookConnectionId}/token/rotate`, { grace_seconds: 'soon' }],
  },
  'POST /portal/connections/:connectionId/locations': {
    valid: async (ids) => [`/portal/connections/${ids.t.partnerConnectionId}/locations`, { location_id: 'loc-walk' }],
    invalid: (ids) => [`/portal/connections/${ids.t.partnerConnectionId}/locations`, { location_id: '' }],
  },
  'POST /portal/connections/:connectionId/locations/:locationId/rotate': {
    valid: async (ids) => [`/portal/connections/${ids.t.partnerConnectionId}/locations/${ids.t.locationId}/rotate`, { grace_seconds: '60' }],
    invalid: (ids) => [`/portal/connections/${ids.t.partnerConnectionId}/locations/${ids.t.locationId}/rotate`, { grace_seconds: '-1' }],
  },
  'POST /portal/connections/:connectionId/locations/:locationId/remove': {
    valid: async (ids) => [`/portal/connections/${ids.t.partnerConnectionId}/locations/loc-walk/remove`, {}],
  },
  'POST /portal/connections/:connectionId/require-token': {
    valid: async (ids) => [`/portal/connections/${ids.t.partnerConnectionId}/require-token`, { require_token: 'false' }],
    invalid: (ids) => [`/portal/connections/${ids.t.partnerConnectionId}/require-token`, { require_token: 'maybe' }],
  },
  // saving leads to the review page (a GET); only its own form applies the change
  'POST /portal/connections/:connectionId/mappings': {
    valid: async (ids) => [conn(ids, '/mappings'), { from: 'Mail', to: 'email' }],
    invalid: (ids) => [conn(ids, '/mappings'), { from: 'Mail', to: 'no_such_field' }],
  },
  'POST /portal/connections/:connectionId/mappings/apply': {
    valid: async (ids) => [conn(ids, '/mappings/apply'), { from: 'Mail', to: 'email' }],
    invalid: (ids) => [conn(ids, '/mappings/apply'), { from: 'Mail', to: 'no_such_field' }],
  },
  // the confirmation's form; without `confirm` it is sent to the question (303 too): no invalid form
  'POST /portal/settings/logo/delete': { valid: async () => ['/portal/settings/logo/delete', { confirm: 'yes' }] },
  'POST /portal/settings/domains': {
    valid: async () => ['/portal/settings/domains', { domains: 'example.com' }],
    invalid: () => ['/portal/settings/domains', { domains: 'not a domain' }],
  },
  'POST /portal/settings/custom-fields': {
    valid: async () => ['/portal/settings/custom-fields', { key: 'walk_field', label: 'Walk', type: 'text' }],
    invalid: () => ['/portal/settings/custom-fields', { key: 'Not A Key', label: 'x', type: 'text' }],
  },
  'POST /portal/webhooks': {
    valid: async () => ['/portal/webhooks', { url: 'https://hooks.example.com/walk', payload_version: '2' }],
    invalid: () => ['/portal/webhooks', { url: '', payload_version: '2' }],
  },
  'POST /portal/webhooks/:integrationId': {
    valid: async (ids) => [hook(ids), { url: 'https://hooks.example.com/walked', payload_version: '2', active: 'on' }],
    invalid: (ids) => [hook(ids), { url: '', payload_version: '2' }],
  },
  'POST /portal/webhooks/:integrationId/enable': { valid: async (ids) => [hook(ids, '/enable'), {}] },
  'POST /portal/webhooks/:integrationId/secret/reveal': { valid: async (ids) => [hook(ids, '/secret/reveal'), {}] },
  'POST /portal/webhooks/:integrationId/secret/rotate': {
    valid: async (ids) => [hook(ids, '/secret/rotate'), { grace_seconds: '3600' }],
    invalid: (ids) => [hook(ids, '/secret/rotate'), { grace_seconds: '5' }],
  },
  'POST /portal/webhooks/:integrationId/test': { valid: async (ids) => [hook(ids, '/test'), {}] },
  // the confirmed post of "End it now" (without `confirm` it is sent to the question, 303 too): no field that can be wrong
  'POST /portal/webhooks/:integrationId/secret/end-grace': { valid: async (ids) => [hook(ids, '/secret/end-grace'), { confirm: 'yes' }] },
  // the confirmed post switches the spare one off (the unconfirmed one answers 303 to the question)
  'POST /portal/webhooks/:integrationId/disable': { valid: async (ids) => [`/portal/webhooks/${ids.spareIntegrationId}/disable`, { confirm: 'yes' }] },
  // the confirmed post (the first one, without `confirm`, answers 303 to the confirmation page and changes nothing)
  'POST /portal/webhooks/:integrationId/delete': { valid: async (ids) => [`/portal/webhooks/${ids.spareIntegrationId}/delete`, { confirm: 'yes' }] },
  // the POST is the confirmed step (the GET shows what would be sent); an empty since is refused
  'POST /portal/webhooks/:integrationId/recover': {
    valid: async (ids) => [hook(ids, '/recover'), { since: new Date(Date.now() - 3_600_000).toISOString().slice(0, 19) }],
    invalid: (ids) => [hook(ids, '/recover'), { since: '' }],
  },
  // the question is a GET page; the form has no field that can be wrong (nothing waiting sends none)
  'POST /portal/webhooks/:integrationId/retry-waiting': { valid: async (ids) => [hook(ids, '/retry-waiting'), {}] },
  'POST /portal/settings/branding': {
    valid: async () => ['/portal/settings/branding', { display_name: 'Walk Co', accent: '#2f6fd6' }],
    invalid: () => ['/portal/settings/branding', { display_name: 'Walk Co', accent: 'orange' }],
  },
  // a new URL leads to its secret's reveal page (303 too); listed before the test, which needs a channel
  'POST /portal/settings/alerts': {
    valid: async () => ['/portal/settings/alerts', { email: 'ops@example.com', url: 'https://hooks.example.com/alerts' }],
    invalid: () => ['/portal/settings/alerts', { email: 'not an address', url: '' }],
  },
  // the form is one button: nothing in it can be wrong (with no channel set it answers a 409 page)
  'POST /portal/settings/alerts/test': { valid: async () => ['/portal/settings/alerts/test', {}] },
  'POST /portal/webhooks/:integrationId/deliveries/:deliveryId/replay': { valid: async (ids) => [hook(ids, `/deliveries/${ids.deliveryId}/replay`), {}] },
  'POST /contacts/:contactId/links': {
    valid: async (ids) => [`/contacts/${ids.contactId}/links`, { destination_url: 'https://example.com/walk' }],
    invalid: (ids) => [`/contacts/${ids.contactId}/links`, { destination_url: 'https://not-authorized.test/' }],
  },
  'POST /portal/sign-out': { valid: async () => ['/portal/sign-out', {}] },
}

/** Routes whose valid case signs this session out or in: walked last, each with a session of its own. */
const SESSION_CHANGING = new Set(['POST /portal/sign-out', 'POST /portal/sign-in'])

describe('every portal form answers a redirect (303) when valid and an error page when not (issue 22, defect 2)', () => {
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let portal: Injectable
  let ids: Ids
  const routes: string[] = []

  beforeAll(async () => {
    deps = await createTestDeps({ queue: recordingQueue().queue })
    portal = await buildPortal(deps, {
      beforeRoutes: async (app) => {
        app.addHook('onRoute', (route) => {
          const hidden = (route.schema as { hide?: boolean } | undefined)?.hide === true
          for (const method of [route.method].flat()) {
            if (method === 'POST' && hidden && !route.url.startsWith('/api/')) routes.push(`POST ${route.url}`)
          }
        })
      },
    })
    const t = await createTestTenant(deps, { integration: { url: 'https://hooks.example.com/walk-base' } })
    const now = new Date().toISOString()
    const delivery = await createDelivery(deps, { accountId: t.accountId, integrationId: t.integrationId, eventId: 'evt_walk', body: '{}', now })
    const [contact] = await deps.contacts.upsertBatch(
      t.accountId,
      [{ source: 'crm', external_id: 'walk-1', writer: 'form', at: now, origin: 'test:0', patch: { business_email: 'walk@example.com' } }],
      mergeContact,
    )
    const spare = await createIntegration(deps, t.accountId, { url: 'https://hooks.example.com/walk-spare', payload_version: 2 })
    ids = { t, deliveryId: delivery.id, contactId: contact!.contactId, cookie: await signIn(portal, t.accountId), spareIntegrationId: spare.id }
  })
  afterAll(async () => {
    await ids?.t.cleanup()
    await portal?.close()
    await deps?.cleanup()
  })

  it('has a case or a documented exception for every POST route of the pages, and none for a route that is gone', () => {
    expect(routes.length).toBeGreaterThan(10)
    const unaccounted = routes.filter((r) => !(r in CASES) && !(r in EXCEPTIONS) && !SESSION_CHANGING.has(r))
    expect(unaccounted, 'a new form: add its valid and invalid case to CASES (or a reason to EXCEPTIONS)').toEqual([])
    const stale = [...Object.keys(CASES), ...Object.keys(EXCEPTIONS)].filter((r) => !routes.includes(r))
    expect(stale).toEqual([])
  })

  const isRedirectToPortal = (res: LightMyRequestResponse) => {
    expect(res.statusCode, res.body.slice(0, 300)).toBe(303)
    // a path on this origin, never a secret in it: reveal pages carry a random id only
    expect(String(res.headers.location)).toMatch(/^\/(portal|contacts)\//)
  }

  it('answers every valid submission with 303 to a page', async () => {
    for (const [route, c] of Object.entries(CASES)) {
      if (SESSION_CHANGING.has(route)) continue
      const [path, fields] = await c.valid(ids)
      const res = await formPost(portal, path, ids.cookie, fields)
      expect.soft(res.statusCode, `${route}: ${res.body.slice(0, 300)}`).toBe(303)
      if (res.statusCode === 303) isRedirectToPortal(res)
    }
  })

  it('answers every invalid submission with an error page (4xx HTML), never a redirect or a 2xx', async () => {
    for (const [route, c] of Object.entries(CASES)) {
      if (!c.invalid) continue
      const [path, fields] = c.invalid(ids)
      const res = await formPost(portal, path, ids.cookie, fields)
      expect.soft(res.statusCode, `${route}: ${res.body.slice(0, 200)}`).toBeGreaterThanOrEqual(400)
      expect.soft(res.statusCode, route).toBeLessThan(500)
      expect.soft(String(res.headers['content-type']), route).toContain('text/html')
    }
  })

  it('signing in (the switch-account form) and signing out answer 303', async () => {
    const signOut = await formPost(portal, '/portal/sign-out', await signIn(portal, ids.t.accountId))
    isRedirectToPortal(signOut)
    const { url } = await mintLink(portal, ids.t.accountId)
    const signInAgain = await formPost(portal, pathOf(url), await signIn(portal, ids.t.accountId))
    isRedirectToPortal(signInAgain)
  })
})
