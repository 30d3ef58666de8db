import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { AddressInfo } from 'node:net'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { ServiceDefinition } from '@lsv/shared/platform/serve.ts'
import { PRE_AUTH_LIMITS, PreAuthBudget } from '@lsv/shared/domain/ingest/preauth-budget.ts'
import { edgeIngest } from '../../services/edge-ingest/src/service.ts'
import { portalApi } from '../../services/portal-api/src/service.ts'
import { upsertWorker } from '../../services/upsert-worker/src/service.ts'
import { webhookDispatcher } from '../../services/webhook-dispatcher/src/service.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { recordingQueue } from '../ingest/support/harness.ts'
import { firstResponse, rawConnect } from './support/raw.ts'

/**
 * Issue 21, "make it structural": every route of every service, as fastify's own route table
 * lists it (an onRoute hook installed before any route is registered, through the composition
 * root's `beforeRoutes`), so a route added later is walked without anyone adding it here. Each
 * is sent, by an anonymous caller over loopback:
 * - an oversized body: 16 MiB declared, 64 KiB sent. The answer must come without the rest, i.e.
 *   the route refused the caller or the size before reading the body;
 * - a deeply nested body (100,000 levels), and a wrong content type: never a 5xx;
 * - a slow drip: 1 MiB declared, 16 bytes sent. The answer must come without the rest, unless
 *   the route is listed in READS_BEFORE_IDENTIFYING, which says how its reading is bounded.
 * Every answer is checked for status (never 5xx), size (an error answer at most 16 KiB, any
 * other answer to a method with a body at most 1 MiB) and time (within a generous ANSWER_WAIT_MS; only a bound on waiting);
 * afterwards the process's heap and buffers, which must not have grown by more than
 * MEMORY_GROWTH_BOUND.
 *
 * Mutations that fail it (each seen failing): the sign-out route without its 1 KiB bodyLimit
 * (routes/portal/access.ts: the drip is read, unanswered), an internal route admitting the
 * caller without its token (here: /tasks/deliver with no identity configured, where loopback
 * admits: the drip is read). The portal screens' session check as a `preHandler` is caught by
 * test/http/before-caller-known.test.ts (here the forms' 64 KiB limit answers 413 first).
 *
 * What no route serves is walked too (issue 28, item 4; further down): every method on every
 * known path, unknown paths and random ones, each declaring 8 MiB and sending none, must be
 * answered. The services' RSS while whole bodies to unrouted requests are in flight is measured
 * by test/reliability/unrouted-body-memory.test.ts, alone on the machine (a peak of RSS moves
 * with the load beside it).
 *
 * MEASURE_ANONYMOUS=1 adds the measurement of docs/reliability.md ("An anonymous 8 MiB body, on
 * every route"): one complete 8 MiB body per route, figures printed, nothing asserted.
 */
const MiB = 1024 * 1024
const ANSWER_WAIT_MS = 10_000
const MEMORY_GROWTH_BOUND = 256 * MiB
const ERROR_ANSWER_BOUND = 16 * 1024
const ANY_ANSWER_BOUND = MiB

/**
 * Routes that read a body before the caller is identified, and what bounds it. Only these may
 * leave a dripping anonymous body unanswered.
 */
const READS_BEFORE_IDENTIFYING: Record<string, string> = {
  'edge-ingest POST /v1/contacts/partnercrm':
    'contract 4.5 names the location in the body: read as bytes, unparsed, within the per-account pre-authentication budget (preauth-budget.ts)',
}

interface Walked {
  service: string
  app: App
  port: number
  host: string
  routes: Array<{ method: string; url: string }>
  /** every method each route URL answers, HEAD included (fastify adds HEAD to GET routes) */
  routed: Map<string, Set<string>>
}

const SERVICES: ServiceDefinition[] = [edgeIngest, portalApi, upsertWorker, webhookDispatcher]
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

describe('every route, as an anonymous caller', () => {
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let t: StoredTenant
  const walked: Walked[] = []
  const budget = new PreAuthBudget(PRE_AUTH_LIMITS)

  beforeAll(async () => {
    // the internal routes with their production identities: a token is required, as in Google Cloud
    deps = await createTestDeps({
      queue: recordingQueue().queue,
      config: { pushAudience: 'https://worker.example', pushServiceAccount: 'pubsub-push@example.iam.gserviceaccount.com' },
      env: { DISPATCHER_URL: 'https://dispatcher.example', TASKS_SERVICE_ACCOUNT: 'tasks-invoker@example.iam.gserviceaccount.com' },
    })
    t = await createTestTenant(deps)
    for (const service of SERVICES) {
      const routes: Walked['routes'] = []
      const routed: Walked['routed'] = new Map()
      const app = await service.build(deps, {
        beforeRoutes: async (a) => {
          a.addHook('onRoute', (route) => {
            for (const method of [route.method].flat()) {
              if (method !== 'HEAD') routes.push({ method, url: route.url })
              routed.set(route.url, (routed.get(route.url) ?? new Set()).add(method))
            }
          })
        },
        ...(service === edgeIngest ? { preAuthBudget: budget } : {}),
      } as Parameters<ServiceDefinition['build']>[1])
      await app.listen({ port: 0, host: '127.0.0.1' })
      const port = (app.server.address() as AddressInfo).port
      walked.push({ service: service.name, app, port, host: service === edgeIngest ? t.host : `127.0.0.1:${port}`, routes, routed })
    }
  })
  afterAll(async () => {
    for (const w of walked) await w.app.close()
    await t?.cleanup()
    await deps?.cleanup()
  })

  /** the first answer has come whole: all the bytes its Content-Length declares (a chunked one is waited for, bounded) */
  const wholeAnswer = (text: string) => {
    const end = text.indexOf('\r\n\r\n')
    const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1]
    return end >= 0 && length !== undefined && Buffer.byteLength(text, 'latin1') - (end + 4) >= Number(length)
  }
  const pathOf = (url: string) => url.replace(/:[A-Za-z_]+/g, `x${Math.random().toString(36).slice(2, 10)}`).replace(/\*$/, 'x')

  /** sends the head and the first bytes; the answer (or null when none came within the wait) */
  async function send(w: Walked, method: string, path: string, headers: Record<string, string | number>, body: Buffer) {
    const c = await rawConnect(w.port)
    const head = Object.entries({ host: w.host, ...headers })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')
    await c.write(`${method} ${path} HTTP/1.1\r\n${head}\r\n`)
    if (body.length > 0) await c.write(body)
    await c.until((text) => firstResponse(text) !== null, ANSWER_WAIT_MS)
    await c.until(wholeAnswer, 50) // the rest of a short answer
    const text = c.received()
    c.socket.destroy()
    const answer = firstResponse(text)
    return answer ? { status: answer.status, bytes: Buffer.byteLength(text, 'latin1') } : null
  }

  it.runIf(process.env.MEASURE_ANONYMOUS === '1')(
    'measures an anonymous 8 MiB body on every route',
    async () => {
      const body = Buffer.alloc(8 * MiB, 0x20)
      body.write('{"contacts":[{"external_id":"m","v":"')
      body.write('"}]}', 8 * MiB - 4)
      for (const w of walked) {
        for (const { method, url } of w.routes) {
          if (!BODY_METHODS.has(method)) continue
          const base = process.memoryUsage()
          let peak = 0
          const sampler = setInterval(() => {
            const m = process.memoryUsage()
            peak = Math.max(peak, m.heapUsed + m.arrayBuffers - base.heapUsed - base.arrayBuffers)
          }, 5)
          const started = performance.now()
          const c = await rawConnect(w.port)
          await c.write(`${method} ${pathOf(url)} HTTP/1.1\r\nhost: ${w.host}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`)
          void c.write(body)
          while (firstResponse(c.received()) === null && !c.socket.destroyed && performance.now() - started < 30_000) await new Promise((r) => setTimeout(r, 2))
          const ms = performance.now() - started
          await new Promise((r) => setTimeout(r, 50))
          clearInterval(sampler)
          const answer = firstResponse(c.received())
          c.socket.destroy()
          console.log(
            `MEASURE | ${w.service} | ${method} ${url} | ${answer?.status ?? 'none'} | ${(peak / MiB).toFixed(1)} MiB | ${ms.toFixed(0)} ms | ${Buffer.byteLength(c.received(), 'latin1')} B |`,
          )
        }
      }
    },
    600_000,
  )

  it('walks a route table that covers every service', () => {
    for (const w of walked) expect(w.routes.length, w.service).toBeGreaterThan(0)
    const all = walked.flatMap((w) => w.routes.map((r) => `${w.service} ${r.method} ${r.url}`))
    for (const route of Object.keys(READS_BEFORE_IDENTIFYING)) expect(all).toContain(route)
    expect(all.length).toBeGreaterThan(60)
  })

  it('answers every hostile anonymous request early, small and without a 5xx; memory stays bounded', async () => {
    const before = process.memoryUsage()
    const problems: string[] = []
    const deep = Buffer.from(`${'['.repeat(100_000)}${']'.repeat(100_000)}`)
    for (const w of walked) {
      for (const { method, url } of w.routes) {
        const name = `${w.service} ${method} ${url}`
        const path = pathOf(url)
        const withBody = BODY_METHODS.has(method)
        const cases: Array<[string, Record<string, string | number>, Buffer, boolean]> = [
          ['oversized', { 'content-type': 'application/json', 'content-length': 16 * MiB }, Buffer.alloc(64 * 1024, 0x20), true],
          ['deep', { 'content-type': 'application/json', 'content-length': deep.length }, deep, false],
          ['wrong content type', { 'content-type': 'application/xml', 'content-length': 6 }, Buffer.from('<x/>\r\n'), false],
          ['slow drip', { 'content-type': 'application/x-www-form-urlencoded', 'content-length': MiB }, Buffer.from('a=1&b=2&c=3&d=45'), true],
        ]
        for (const [label, headers, body, partial] of cases) {
          if (!withBody && label !== 'oversized') continue
          const answer = await send(w, method, path, headers, body)
          if (answer === null) {
            if (partial && READS_BEFORE_IDENTIFYING[name]) continue
            problems.push(`${name} ${label}: no answer while the body was incomplete`)
            console.log(problems.at(-1))
            continue
          }
          if (answer.status >= 500 && answer.status !== 503) problems.push(`${name} ${label}: ${answer.status}`)
          // a GET's success is the route's own document (the API reference's script is 4 MiB),
          // whatever was sent; anything else is bounded
          const bound = answer.status >= 400 ? ERROR_ANSWER_BOUND : withBody ? ANY_ANSWER_BOUND : Number.POSITIVE_INFINITY
          if (answer.bytes > bound) problems.push(`${name} ${label}: answer of ${answer.bytes} bytes`)
        }
      }
    }
    expect(problems).toEqual([])
    const after = process.memoryUsage()
    const grown = after.heapUsed + after.arrayBuffers - (before.heapUsed + before.arrayBuffers)
    console.log(`ANONYMOUS-ROUTES ${walked.reduce((n, w) => n + w.routes.length, 0)} routes; heap+buffers grew ${(grown / MiB).toFixed(1)} MiB`)
    expect(grown).toBeLessThan(MEMORY_GROWTH_BOUND)
    // what the listed route held: never more than one account's share
    expect(budget.peak).toBeLessThanOrEqual(PRE_AUTH_LIMITS.accountBytes)
  }, 600_000)
  /**
   * Issue 28, item 4: the bound lives in the server, not in the routes. A request that no route
   * serves has no route to walk, so these walk the other side: every method on every known path,
   * unknown paths, and random ones. Each request declares a whole 8 MiB body (the edge's and the
   * portal's limit) and sends none of it: the answer must come anyway, i.e. nothing waited for the
   * body before answering. Before the seam (http/unrouted.ts) fastify read and parsed a not-found
   * request's body first, and these waited unanswered.
   */
  const DECLARED = { 'content-type': 'application/json', 'content-length': 8 * MiB }
  const UNROUTED_WAIT_MS = 5_000
  /** every method a client can send that fastify's router and node's parser take (CONNECT is a tunnel, not a request) */
  const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'SEARCH', 'MKCOL', 'PURGE']
  const UNKNOWN_PATHS = [
    '/',
    '/no-such-path',
    '/api/v1/no-such',
    '/portal/no-such',
    '/v1/no-such',
    '/v1/contacts/a/b',
    '/pubsub/no-such',
    '/tasks/no-such',
    '/docs/no-such',
    '/healthz/x',
  ]
  /** the one route and method that may wait for its body (READS_BEFORE_IDENTIFYING) */
  const waitsForBody = (w: Walked, method: string, path: string) =>
    w.service === 'edge-ingest' && method === 'POST' && /^\/v1\/contacts\/partnercrm\/?(\?|$)/.test(path)

  /** the head of a request declaring 8 MiB, no body: its status, or null when none came */
  async function headOnly(w: Walked, method: string, path: string): Promise<number | null> {
    const c = await rawConnect(w.port)
    const head = Object.entries({ host: w.host, ...DECLARED })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')
    await c.write(`${method} ${path} HTTP/1.1\r\n${head}\r\n`)
    await c.until((text) => firstResponse(text) !== null, UNROUTED_WAIT_MS)
    const answer = firstResponse(c.received())
    c.socket.destroy()
    return answer?.status ?? null
  }

  it('answers every method on every known path, and unknown paths, before the body (an unrouted one 404)', async () => {
    const problems: string[] = []
    let sent = 0
    for (const w of walked) {
      const paths = [...new Set([...w.routed.keys()].map((url) => [url, pathOf(url)] as const))]
      const cases = [...paths, ...UNKNOWN_PATHS.map((p) => [null, p] as const)]
      for (const [url, path] of cases) {
        for (const method of METHODS) {
          if (waitsForBody(w, method, path) || problems.length >= 5) continue
          const status = await headOnly(w, method, path)
          sent++
          const name = `${w.service} ${method} ${path}`
          if (status === null) problems.push(`${name}: no answer before the body`)
          else if (status >= 500 && status !== 503) problems.push(`${name}: ${status}`)
          else if (url !== null && !w.routed.get(url)!.has(method) && status !== 404) problems.push(`${name}: ${status}, not 404 (no route)`)
        }
      }
    }
    console.log(`UNROUTED ${sent} method × path requests, each declaring 8 MiB and sending none`)
    expect(problems).toEqual([])
  }, 600_000)

  it('answers random paths with any method before the body', async () => {
    const prefixes = ['', '/v1/contacts', '/api/v1', '/api/contacts', '/portal', '/docs', '/pubsub', '/tasks', '/healthz']
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: walked.length - 1 }),
        fc.constantFrom(...METHODS),
        fc.constantFrom(...prefixes),
        fc.webPath(),
        fc.option(fc.webQueryParameters(), { nil: undefined }),
        async (service, method, prefix, path, query) => {
          const w = walked[service]!
          const target = `${prefix}${path.startsWith('/') || path === '' ? path : `/${path}`}${query ? `?${query}` : ''}` || '/'
          fc.pre(!waitsForBody(w, method, target))
          const status = await headOnly(w, method, target)
          expect(status, `${w.service} ${method} ${target}`).not.toBeNull()
          expect(status === 503 || status! < 500, `${w.service} ${method} ${target}: ${status}`).toBe(true)
        },
      ),
      { numRuns: 200, endOnFailure: true },
    )
  }, 600_000)
})

/**
 * Issue 28, item 4, measured as the attack measured it: the resident memory of the services'
 * process while several requests that no route serves are in flight, each sending a whole 8 MiB
 * body of small JSON objects (what costs most to parse: about 14 times its bytes). The services
 * run in a process of their own (support/services-child.ts), so the RSS is theirs alone.
 *
 * Before the seam (http/unrouted.ts) each body was read and parsed before its 404: the attack saw
 * 4 such requests take edge-ingest from 156 to 1,141 MiB. Now each is answered at once and its
 * body drained without being kept (lingering-close.ts), so the growth stays far below one body's
 * size, whatever the number in flight.
 */
