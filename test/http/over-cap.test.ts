import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { tempDataDir } from '../helpers/embedded.ts'
import { curlPost, nodeClientPosts, urllibPosts, type ClientResult, type Target } from './support/clients.ts'

/**
 * Contract 4.3–4.6: a body of 8,388,609 bytes (one over the cap) is answered 413 `payload too
 * large`, and every common client must actually receive that answer: node:http, fetch (undici),
 * curl and Python's urllib, each many times, against listening servers, on every route with the
 * cap. (A server that answers and closes at once makes the kernel reset the connection while the
 * client is still sending; urllib then never sees the answer: shared/src/http/lingering-close.ts.)
 * An early 401 (wrong key, big body) must arrive the same way.
 */
const OVER_CAP = 8_388_609
const TOO_LARGE = { status: 413, text: '{"ok":false,"error":"payload too large"}' }
const UNAUTHORIZED = { status: 401, text: '{"ok":false,"error":"unauthorized"}' }
const REPEAT_MAIN = 20
const REPEAT_OTHER = 3

describe('over-cap bodies reach every client as 413 with the envelope', () => {
  let h: Harness
  const tenants: StoredTenant[] = []
  let edgePort = 0
  let portalPort = 0
  const files = tempDataDir('lsv-over-cap-')
  const bodyFile = join(files.dir, 'over-cap.json')
  // a JSON object that would be valid if it were not too large
  const body = Buffer.concat([Buffer.from('{"contacts":[{"external_id":"x","pad":"'), Buffer.alloc(OVER_CAP - 43, 'p'), Buffer.from('"}]}')])

  beforeAll(async () => {
    expect(body.length).toBe(OVER_CAP)
    writeFileSync(bodyFile, body)
    h = await createHarness()
    // one tenant per client, so no key or source reaches its rate limit
    for (let i = 0; i < 4; i++) tenants.push(await createTestTenant(h.deps))
    await h.edge.listen({ port: 0, host: '127.0.0.1' })
    await h.portal.listen({ port: 0, host: '127.0.0.1' })
    edgePort = (h.edge.server.address() as AddressInfo).port
    portalPort = (h.portal.server.address() as AddressInfo).port
  })
  afterAll(async () => {
    for (const t of tenants) await t.cleanup()
    await h?.close()
    files.cleanup()
  })

  /** every capped route, with the credential it needs (the cap applies after authentication) */
  const routes = (t: StoredTenant): Array<{ name: string; target: Target }> => [
    {
      name: 'POST /v1/contacts (4.3)',
      target: { port: edgePort, host: t.host, path: '/v1/contacts', headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' } },
    },
    {
      name: 'POST /v1/contacts/{sourceId} (4.4)',
      target: {
        port: edgePort,
        host: t.host,
        path: `/v1/contacts/${t.webhook.id}`,
        headers: { 'x-webhook-token': t.sourceToken, 'content-type': 'application/json' },
      },
    },
    {
      name: 'POST /v1/contacts/partnercrm (4.5)',
      target: {
        port: edgePort,
        host: t.host,
        path: '/v1/contacts/partnercrm',
        headers: { 'x-webhook-token': t.locationToken, 'content-type': 'application/json' },
      },
    },
    {
      name: 'POST /api/contacts (4.6)',
      target: { port: portalPort, host: 'localhost', path: '/api/contacts', headers: { 'x-api-key': t.key, 'content-type': 'application/json' } },
    },
    {
      name: 'POST /api/contacts/webhook/{sourceId} (4.6)',
      target: {
        port: portalPort,
        host: 'localhost',
        path: `/api/contacts/webhook/${t.webhook.id}?token=${encodeURIComponent(t.sourceToken)}`,
        headers: { 'content-type': 'application/json' },
      },
    },
  ]
  const wrongKey = (t: StoredTenant): Target => ({
    port: edgePort,
    host: t.host,
    path: '/v1/contacts',
    headers: { authorization: `Bearer lsk_${'w'.repeat(43)}`, 'content-type': 'application/json' },
  })

  type Expected = { status: number; text: string }
  /** the requests one client sends: 20 on POST /v1/contacts, 3 on every other capped route, 3 with a wrong key */
  function jobsFor(t: StoredTenant): Array<{ route: string; target: Target; expected: Expected }> {
    const jobs: Array<{ route: string; target: Target; expected: Expected }> = []
    const [main, ...others] = routes(t)
    for (let i = 0; i < REPEAT_MAIN; i++) jobs.push({ route: main!.name, target: main!.target, expected: TOO_LARGE })
    for (const r of others) for (let i = 0; i < REPEAT_OTHER; i++) jobs.push({ route: r.name, target: r.target, expected: TOO_LARGE })
    for (let i = 0; i < REPEAT_OTHER; i++) jobs.push({ route: 'wrong key', target: wrongKey(t), expected: UNAUTHORIZED })
    return jobs
  }

  /** what each request got that was not exactly the expected status and body */
  async function check(t: StoredTenant, send: (jobs: Array<{ target: Target; bodyFile: string }>) => Promise<ClientResult[]>) {
    const jobs = jobsFor(t)
    const results = await send(jobs.map((j) => ({ target: j.target, bodyFile })))
    expect(results).toHaveLength(REPEAT_MAIN + 5 * REPEAT_OTHER)
    const wrong = jobs.flatMap((j, i) => {
      const r = results[i]!
      return r.status === j.expected.status && r.text === j.expected.text ? [] : [`${j.route}: ${JSON.stringify(r)}`]
    })
    expect(wrong).toEqual([])
  }

  // every client runs in a process of its own, as callers do
  it('node:http', async () => {
    await check(tenants[0]!, (jobs) => nodeClientPosts('http', jobs))
  }, 120_000)

  it('fetch (undici)', async () => {
    await check(tenants[1]!, (jobs) => nodeClientPosts('fetch', jobs))
  }, 120_000)

  it('curl', async () => {
    await check(tenants[2]!, async (jobs) => {
      const results: ClientResult[] = []
      for (const job of jobs) results.push(await curlPost(job.target, job.bodyFile))
      return results
    })
  }, 120_000)

  it('Python urllib', async () => {
    await check(tenants[3]!, urllibPosts)
  }, 120_000)
})
