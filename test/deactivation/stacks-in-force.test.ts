/**
 * Black box, on `npm start` and on `npm run start:cloud` (the deployed shape: portal-api and
 * edge-ingest are separate processes over Firestore, each with its own lookup cache): an access
 * change made through the management API is in force at the edge when the call returns. The edge
 * first answers a push (twice, so it has read the tenant into its cache and confirmed its version),
 * the operator makes the call over HTTP, and the very next push must get the new answer. Only HTTP
 * to the running stack.
 *
 * Without the wait (settleTenantWrites not wired in shared/src/platform/deps-stores.ts) the removals here
 * still answered 202 and the reactivated source 401 on start:cloud, for up to the Firestore bound
 * (1 s): the deterministic control of that is in-force-on-return.test.ts (instance B0).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { emulators } from '../helpers/embedded.ts'
import { createTestTenant, type ManagedTenantIds } from '../helpers/tenant.ts'
import { http, managementApp } from '../blackbox/client.ts'
import { cleanUpStacks, startCloudStack, type Stack } from '../blackbox/stacks.ts'
import { fromHub } from '../browser/hub-client.ts'
import { OPERATOR } from '../management/harness.ts'
import { ACCESS_CHANGES, type Admin, type CaseTenant, type Push } from './cases.ts'

afterAll(cleanUpStacks, 60_000)

/**
 * `npm start`'s stack of the run, shared with the browser files (test/setup/browser-hub.ts; its
 * operator token is OPERATOR's): this file's tenants are its own, with random ids. The hub stops it.
 */
async function sharedLocalStack(): Promise<Stack> {
  const shared = await fromHub('/stack')
  return { edgeTemplate: shared.edgeUrlTemplate, portalUrl: shared.portal, output: () => '', stop: async () => ({ code: null, leftovers: [] }) }
}

const stacks = [
  { name: 'npm start (embedded adapters)', start: sharedLocalStack, skip: false },
  { name: 'npm run start:cloud (the deployed shape)', start: startCloudStack, skip: !emulators.firestore || !emulators.pubsub },
]

describe.each(stacks)('black box: an access change is in force at the edge when the call returns ($name)', ({ start, skip }) => {
  let stack: Stack
  beforeAll(async () => {
    if (!skip) stack = await start()
  }, 180_000)
  afterAll(async () => {
    await stack?.stop()
  }, 60_000)

  const admin: Admin = async (method, url, payload) => {
    const res = await http(`${stack.portalUrl}${url}`, {
      method,
      headers: { ...OPERATOR, ...(payload ? { 'content-type': 'application/json' } : {}) },
      ...(payload ? { body: JSON.stringify(payload) } : {}),
    })
    return { status: res.status, body: res.text === '' ? null : res.json() }
  }
  const pushTo =
    (t: ManagedTenantIds): Push =>
    async (path, headers, payload) =>
      (
        await http(`${stack.edgeTemplate.replace('{public_id}', t.publicId)}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify(payload),
        })
      ).status

  it.skipIf(skip).each(ACCESS_CHANGES.map((c) => [c.name, c] as const))(
    '%s',
    async (_name, c) => {
      const made = await createTestTenant({ managementApi: managementApp(stack.portalUrl) }, c.spec)
      const t: CaseTenant = { ...made }
      await c.setup?.(admin, t)
      const push = pushTo(made)
      expect([await c.push(push, t), await c.push(push, t)]).toEqual([c.was, c.was])
      await c.change(admin, t)
      expect(await c.push(push, t)).toBe(c.becomes)
    },
    60_000,
  )
})
