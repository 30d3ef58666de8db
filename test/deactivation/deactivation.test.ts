import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { body, createHarness, type Harness, type Injectable, record } from '../ingest/support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { fakeMonotonic } from './fake-monotonic.ts'
import { seedContact } from '../links/fixtures.ts'
import { ADMIN, OPERATOR } from '../management/harness.ts'
import { emulators } from '../helpers/embedded.ts'

/**
 * Deactivation through the management API takes effect at once, for every credential on every
 * operation that accepts it: an API key (edge 4.3, the portal push fallback, link minting 4.2, the
 * read API), a webhook source token (edge 4.4 by header and by query, the portal webhook fallback)
 * and a partner CRM location token (edge 4.5). Each credential works before, is refused while its
 * connection (or its account) is inactive, and works again once reactivated, so the refusal can
 * only come from the deactivation.
 *
 * Mutations these tests catch (the first survived main, auth-oracle, key-rotation and fuzz before):
 * - authenticateApiKey (shared/src/domain/auth/authenticate-api-key.ts) without `!connection.active`:
 *   a key of an inactive connection is accepted;
 * - authenticateSource (shared/src/domain/ingest/auth.ts) without `found.active`;
 * - authenticatePartnerCrm without `!connection.active`;
 * - authenticateApiKey / authenticateSource without `!account.active` (portal operations, where
 *   no subdomain is resolved), resolveEdgeAccount without `!account.active` (edge operations).
 */

type Credential = 'key' | 'source token' | 'location token'
type Response = Awaited<ReturnType<Injectable['inject']>>

interface Operation {
  name: string
  credential: Credential
  /** the answer of a working credential */
  okStatus: number
  /** whether the operation resolves the account from the edge subdomain (an inactive one is 404) */
  edge: boolean
  send(h: Harness, t: Subject): Promise<Response>
}

interface Subject extends StoredTenant {
  contactId: string
}

const json = { 'content-type': 'application/json' }
const OPERATIONS: Operation[] = [
  {
    name: 'edge POST /v1/contacts (4.3), bearer key',
    credential: 'key',
    okStatus: 202,
    edge: true,
    send: (h, t) => h.edge.inject({ method: 'POST', url: '/v1/contacts', headers: t.keyHeaders(), payload: body([record(1)]) }),
  },
  {
    name: 'edge POST /v1/contacts (4.3), x-api-key',
    credential: 'key',
    okStatus: 202,
    edge: true,
    send: (h, t) => h.edge.inject({ method: 'POST', url: '/v1/contacts', headers: { host: t.host, 'x-api-key': t.key, ...json }, payload: body([record(2)]) }),
  },
  {
    name: 'portal POST /api/contacts (4.6 fallback)',
    credential: 'key',
    okStatus: 202,
    edge: false,
    send: (h, t) =>
      h.portal.inject({ method: 'POST', url: '/api/contacts', headers: { authorization: `Bearer ${t.key}`, ...json }, payload: body([record(3)]) }),
  },
  {
    name: 'portal POST /api/contacts/links (4.2)',
    credential: 'key',
    okStatus: 200,
    edge: false,
    send: (h, t) =>
      h.portal.inject({
        method: 'POST',
        url: '/api/contacts/links',
        headers: { authorization: `Bearer ${t.key}`, ...json },
        payload: { destinationUrl: 'https://www.example.com/landing', contactId: t.contactId },
      }),
  },
  {
    name: 'portal GET /api/v1/contacts/{id} (read)',
    credential: 'key',
    okStatus: 200,
    edge: false,
    send: (h, t) => h.portal.inject({ method: 'GET', url: `/api/v1/contacts/${t.contactId}`, headers: { 'x-api-key': t.key } }),
  },
  {
    name: 'portal GET /api/v1/contacts (read list)',
    credential: 'key',
    okStatus: 200,
    edge: false,
    send: (h, t) => h.portal.inject({ method: 'GET', url: '/api/v1/contacts', headers: { authorization: `Bearer ${t.key}` } }),
  },
  {
    name: 'edge POST /v1/contacts/{sourceId} (4.4), token header',
    credential: 'source token',
    okStatus: 202,
    edge: true,
    send: (h, t) =>
      h.edge.inject({
        method: 'POST',
        url: `/v1/contacts/${t.webhook.id}`,
        headers: { host: t.host, 'x-webhook-token': t.sourceToken, ...json },
        payload: body([record(4)]),
      }),
  },
  {
    name: 'edge POST /v1/contacts/{sourceId} (4.4), token query',
    credential: 'source token',
    okStatus: 202,
    edge: true,
    send: (h, t) =>
      h.edge.inject({
        method: 'POST',
        url: `/v1/contacts/${t.webhook.id}?token=${encodeURIComponent(t.sourceToken)}`,
        headers: { host: t.host, ...json },
        payload: body([record(5)]),
      }),
  },
  {
    name: 'portal POST /api/contacts/webhook/{sourceId} (4.6 fallback)',
    credential: 'source token',
    okStatus: 202,
    edge: false,
    send: (h, t) =>
      h.portal.inject({
        method: 'POST',
        url: `/api/contacts/webhook/${t.webhook.id}`,
        headers: { 'x-webhook-token': t.sourceToken, ...json },
        payload: body([record(6)]),
      }),
  },
  {
    name: 'edge POST /v1/contacts/partnercrm (4.5), token header',
    credential: 'location token',
    okStatus: 202,
    edge: true,
    send: (h, t) =>
      h.edge.inject({
        method: 'POST',
        url: '/v1/contacts/partnercrm',
        headers: { host: t.host, 'x-webhook-token': t.locationToken, ...json },
        payload: JSON.stringify({ contactId: 'p-1', locationId: t.locationId }),
      }),
  },
  {
    // no token at all is still accepted before the tokenized-URL cutover (contract 5.8), but never
    // for a location of an inactive connection or account
    name: 'edge POST /v1/contacts/partnercrm (4.5), no token (before the cutover)',
    credential: 'location token',
    okStatus: 202,
    edge: true,
    send: (h, t) =>
      h.edge.inject({
        method: 'POST',
        url: '/v1/contacts/partnercrm',
        headers: { host: t.host, ...json },
        payload: JSON.stringify({ contactId: 'p-3', locationId: t.locationId }),
      }),
  },
  {
    name: 'edge POST /v1/contacts/partnercrm (4.5), token query',
    credential: 'location token',
    okStatus: 202,
    edge: true,
    send: (h, t) =>
      h.edge.inject({
        method: 'POST',
        url: `/v1/contacts/partnercrm?token=${encodeURIComponent(t.locationToken)}`,
        headers: { host: t.host, ...json },
        payload: JSON.stringify({ contactId: 'p-2', locationId: t.locationId }),
      }),
  },
]

const BACKENDS = [
  { name: 'embedded', backend: 'embedded' as const, skip: false },
  { name: 'Firestore emulator', backend: 'emulators' as const, skip: !emulators.firestore || !emulators.pubsub },
]

for (const { name, backend, skip } of BACKENDS) {
  describe.skipIf(skip)(`deactivation (${name} tenant store)`, () => {
    const clock = new ManualClock(Date.UTC(2026, 8, 4, 12, 0, 0))
    let h: Harness
    const subjects: StoredTenant[] = []
    beforeAll(async () => {
      // one instance: its own writes clear its cache, so its management calls need not wait out the
      // bound for other instances (a fake clock for that wait saves 1 s per PATCH on Firestore);
      // that they do wait, and must: in-force-on-return.test.ts
      h = await createHarness({ clock, backend, tenantWriteTimer: fakeMonotonic() })
    })
    afterAll(async () => {
      for (const t of subjects) await t.cleanup().catch(() => {})
      await h?.close()
    })

    /** A fresh tenant (its own account, connections, key, tokens and one contact) per case. */
    async function subject(): Promise<Subject> {
      const t = await createTestTenant(h.deps, { api: { key: { scopes: ['contacts:write', 'contacts:links:write', 'contacts:read'] } } })
      subjects.push(t)
      const contactId = await seedContact(h.deps, t.account.id, 'crm', 'deactivation-1')
      return { ...t, contactId }
    }

    /** the connection the operation's credential belongs to */
    function connectionOf(t: Subject, credential: Credential): string {
      return credential === 'key' ? t.api.id : credential === 'source token' ? t.webhook.id : t.partner.id
    }

    async function patch(url: string, payload: Record<string, unknown>): Promise<void> {
      const res = await h.portal.inject({ method: 'PATCH', url, headers: { ...OPERATOR, ...json }, payload })
      expect(res.statusCode, `PATCH ${url} ${res.body}`).toBe(200)
      expect(res.json()).toMatchObject(payload)
    }
    const setConnectionActive = (t: Subject, credential: Credential, active: boolean) =>
      patch(`${ADMIN}/${t.account.id}/connections/${connectionOf(t, credential)}`, { active })
    const setAccountActive = (t: Subject, active: boolean) => patch(`${ADMIN}/${t.account.id}`, { active })

    async function expectWorks(op: Operation, t: Subject, when: string): Promise<void> {
      const res = await op.send(h, t)
      expect({ when, status: res.statusCode, body: res.statusCode === op.okStatus ? 'ok' : res.body }).toEqual({ when, status: op.okStatus, body: 'ok' })
    }

    async function expectRefused(op: Operation, t: Subject, status: number, error: string, when: string): Promise<void> {
      const res = await op.send(h, t)
      expect({ when, status: res.statusCode, body: res.json() }).toEqual({ when, status, body: { ok: false, error } })
    }

    /**
     * What an inactive connection answers (contract): 401 for a key or a source token (4.3, 4.4,
     * 4.2, section 5.6); a partner CRM location whose connection is inactive is answered like an
     * unknown subdomain, 404 (4.5).
     */
    const connectionRefusal = (op: Operation): [number, string] => (op.credential === 'location token' ? [404, 'not found'] : [401, 'unauthorized'])
    /** An inactive account: the edge's subdomain is unknown (404); the portal has none, so 401. */
    const accountRefusal = (op: Operation): [number, string] => (op.edge ? [404, 'not found'] : [401, 'unauthorized'])

    describe('deactivating a connection stops its credential on every operation', () => {
      it.each(OPERATIONS.map((op) => [op.name, op] as const))('%s', async (_name, op) => {
        const t = await subject()
        await expectWorks(op, t, 'before')
        await setConnectionActive(t, op.credential, false)
        const [status, error] = connectionRefusal(op)
        await expectRefused(op, t, status, error, 'connection inactive')
        await expectRefused(op, t, status, error, 'connection inactive, asked again')
        await setConnectionActive(t, op.credential, true)
        await expectWorks(op, t, 'reactivated')
      })

      it("deactivating one connection leaves the account's other credentials working", async () => {
        for (const credential of ['key', 'source token', 'location token'] as const) {
          const t = await subject()
          await setConnectionActive(t, credential, false)
          for (const op of OPERATIONS.filter((o) => o.credential !== credential)) await expectWorks(op, t, `${credential} connection inactive`)
        }
      })
    })

    describe('deactivating an account stops every credential of it on every operation', () => {
      it.each(OPERATIONS.map((op) => [op.name, op] as const))('%s', async (_name, op) => {
        const t = await subject()
        await expectWorks(op, t, 'before')
        await setAccountActive(t, false)
        const [status, error] = accountRefusal(op)
        await expectRefused(op, t, status, error, 'account inactive')
        await setAccountActive(t, true)
        await expectWorks(op, t, 'reactivated')
      })
    })
  })
}
