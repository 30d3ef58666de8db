/**
 * An answer sent before the body was read drains the body afterwards (shared/src/http/lingering-close.ts),
 * and a small drained body leaves the connection usable. Each drain used to add a `close`
 * listener to the socket that was never removed once the body had been drained, holding that
 * request and its answer: a client keeping one connection busy with refused requests (a wrong
 * key, the body sent after the 401) grew the server's memory with every request, before any
 * caller was identified.
 *
 * Over one kept-alive connection to a listening edge: 40 requests with a wrong key, each body
 * sent only after its 401 arrived. The server side's socket must not gain a listener per request.
 * Mutation: settle() without socket.off('close', onClose) → 40+ listeners, and the test fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import type { App } from '@lsv/shared/http/base-app.ts'
import { LINGER } from '@lsv/shared/http/lingering-close.ts'
import { HTTP_TIMEOUTS } from '@lsv/shared/http/timeouts.ts'
import { edgeIngest } from '../../services/edge-ingest/src/service.ts'
import { portalApi } from '../../services/portal-api/src/service.ts'
import { upsertWorker } from '../../services/upsert-worker/src/service.ts'
import { webhookDispatcher } from '../../services/webhook-dispatcher/src/service.ts'
import { createHarness, recordingQueue, type Harness } from '../ingest/support/harness.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { firstResponse, rawConnect, within } from './support/raw.ts'

const REQUESTS = 40
/** a bound on waiting for each answer, never a measurement */
const ANSWER_WAIT_MS = 10_000

describe('early answers on a kept-alive connection', () => {
  let h: Harness
  let t: StoredTenant
  let port = 0
  const serverSockets: Socket[] = []

  beforeAll(async () => {
    h = await createHarness()
    t = await createTestTenant(h.deps)
    h.edge.server.on('connection', (s: Socket) => serverSockets.push(s))
    await h.edge.listen({ port: 0, host: '127.0.0.1' })
    port = (h.edge.server.address() as AddressInfo).port
  })
  afterAll(async () => {
    await t?.cleanup()
    await h?.close()
  })

  it('drain each refused body without a listener left behind per request', async () => {
    const c = await rawConnect(port)
    const payload = '{"contacts":[]}'
    const answers = () => c.received().split('HTTP/1.1 ').length - 1
    for (let i = 0; i < REQUESTS; i++) {
      await c.write(
        `POST /v1/contacts HTTP/1.1\r\nhost: ${t.host}\r\nauthorization: Bearer lsk_${'x'.repeat(43)}\r\ncontent-type: application/json\r\ncontent-length: ${payload.length}\r\n\r\n`,
      )
      for (let waited = 0; waited < ANSWER_WAIT_MS && answers() <= i && !c.socket.destroyed; waited += 5) await new Promise((r) => setTimeout(r, 5))
      expect(answers()).toBe(i + 1)
      // the body, after its answer: drained, and the connection stays open for the next request
      await c.write(payload)
    }
    expect(c.received().match(/HTTP\/1\.1 (\d{3})/g)).toEqual(Array.from({ length: REQUESTS }, () => 'HTTP/1.1 401'))
    expect(c.socket.destroyed).toBe(false)
    expect(serverSockets).toHaveLength(1)
    // node's and fastify's own listeners only: a few, not one per request
    expect(serverSockets[0]!.listenerCount('close')).toBeLessThan(10)
    c.socket.destroy()
  })
})

/**
 * docs/errors.md, "Answers from the HTTP layer": a body declared larger than the drain bound
 * (16 MiB) is answered with `Connection: close`; otherwise the connection stays usable, so an
 * early answer carries the same headers as a late one. A body one byte over a route's cap (the
 * edge's 8 MiB, the worker's push limit, …), sent whole, used to be answered 413 with fastify's
 * `connection: close` (set after any body error) and the connection closed once drained.
 *
 * Over a raw socket, for one capped route of every service (the cap applies after the caller
 * is admitted, so each with its credential): the over-cap body declared and sent whole, then a
 * second request on the same connection. The 413 must carry the `Connection` header of the late
 * answer that follows (`keep-alive`), and the second request must be answered. The same for a
 * chunked body over the cap (no declared length: drained within the bound). A body declared
 * beyond the drain bound is still answered 413 `Connection: close` before it is sent, and the
 * server closes. Mutations (each seen failing): base-app.ts's onSend leaving fastify's
 * `connection: close` on the answer → the 413s carry `close` and the second requests get no
 * answer, on every service; reply.removeHeader('connection') instead of withoutFastifyClose →
 * the 413s carry no `Connection` or `Keep-Alive` header; closesAfterEarlyAnswer without the
 * drain bound → the 16 MiB + 1 declaration is answered keep-alive and the server never closes.
 * (The 408 that still closes is asserted in partnercrm-slow-sender.test.ts.)
 */
describe('an over-cap body within the drain bound keeps the connection (every service)', () => {
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let t: StoredTenant
  const capped: Array<{ service: string; app: App; port: number; host: string; path: string; headers: string; cap: number }> = []

  beforeAll(async () => {
    deps = await createTestDeps({ queue: recordingQueue().queue })
    t = await createTestTenant(deps)
    // one capped route per service, with what admits its caller (the internal routes admit loopback without an identity configured)
    const routes: Record<string, { path: string; headers: string }> = {
      [edgeIngest.name]: { path: '/v1/contacts', headers: `authorization: Bearer ${t.key}\r\n` },
      [portalApi.name]: { path: '/api/contacts', headers: `x-api-key: ${t.key}\r\n` },
      [upsertWorker.name]: { path: '/pubsub/contact-batches', headers: '' },
      [webhookDispatcher.name]: { path: '/tasks/deliver', headers: '' },
    }
    for (const service of [edgeIngest, portalApi, upsertWorker, webhookDispatcher]) {
      const route = routes[service.name]!
      let cap: number | undefined
      const app = await service.build(deps, {
        beforeRoutes: async (a) => {
          a.addHook('onRoute', (r) => {
            if (r.url === route.path && [r.method].flat().includes('POST')) cap = r.bodyLimit
          })
        },
      })
      await app.listen({ port: 0, host: '127.0.0.1' })
      const port = (app.server.address() as AddressInfo).port
      capped.push({
        service: service.name,
        app,
        port,
        host: service === edgeIngest ? t.host : `127.0.0.1:${port}`,
        ...route,
        cap: cap ?? app.initialConfig.bodyLimit!,
      })
    }
  })
  afterAll(async () => {
    for (const c of capped) await c.app.close()
    await t?.cleanup()
    await deps?.cleanup()
  })

  /** the answers in `text`, in order (each framed by its Content-Length) */
  function answersIn(text: string): Array<{ status: number; headers: Record<string, string>; body: string }> {
    const found: Array<{ status: number; headers: Record<string, string>; body: string }> = []
    let rest = text
    for (;;) {
      const end = rest.indexOf('\r\n\r\n')
      if (end < 0) return found
      const answer = firstResponse(rest)!
      const length = Number(answer.headers['content-length'] ?? 0)
      if (rest.length < end + 4 + length) return found
      found.push({ status: answer.status, headers: answer.headers, body: rest.slice(end + 4, end + 4 + length) })
      rest = rest.slice(end + 4 + length)
    }
  }

  /** the over-cap request (head and body as given), then GET /healthz on the same connection: both answers */
  async function overCapThenAnother(c: (typeof capped)[number], head: string, body: Buffer) {
    const conn = await rawConnect(c.port)
    await conn.write(`POST ${c.path} HTTP/1.1\r\nhost: ${c.host}\r\n${c.headers}content-type: application/json\r\n${head}\r\n`)
    await conn.write(body)
    await conn.until((text) => answersIn(text).length >= 1, ANSWER_WAIT_MS)
    await conn.write(`GET /healthz HTTP/1.1\r\nhost: ${c.host}\r\n\r\n`)
    await conn.until((text) => answersIn(text).length >= 2, ANSWER_WAIT_MS)
    const answers = answersIn(conn.received())
    const open = !conn.socket.destroyed && !conn.socket.readableEnded
    conn.socket.destroy()
    return { answers, open }
  }

  /** what each service's two answers were, as compared: status, `Connection`, `Keep-Alive`, the 413's body; and whether the connection stayed open */
  const seen = (service: string, { answers, open }: Awaited<ReturnType<typeof overCapThenAnother>>) => ({
    service,
    answers: answers.map((a) => ({
      status: a.status,
      connection: a.headers.connection,
      keepAlive: a.headers['keep-alive'],
      body: a.status === 413 ? a.body : '',
    })),
    open,
  })
  /** both answers with node's own connection headers (`Keep-Alive: timeout=620` on a late answer), and the connection open */
  const keptAlive = (service: string, keepAlive: string | undefined) => ({
    service,
    answers: [
      { status: 413, connection: 'keep-alive', keepAlive, body: '{"ok":false,"error":"payload too large"}' },
      { status: 200, connection: 'keep-alive', keepAlive, body: '' },
    ],
    open: true,
  })

  it('answers a body one byte over the cap, declared and sent whole, 413 with the headers of a late answer, and serves the next request', async () => {
    const results = []
    for (const c of capped) {
      expect(c.cap, c.service).toBeLessThan(LINGER.maxBytes)
      results.push(seen(c.service, await overCapThenAnother(c, `content-length: ${c.cap + 1}\r\n`, Buffer.alloc(c.cap + 1, 0x20))))
    }
    const keepAlive = `timeout=${HTTP_TIMEOUTS.keepAliveTimeoutMs / 1000}`
    expect(results).toEqual(capped.map((c) => keptAlive(c.service, keepAlive)))
  }, 120_000)

  it('answers a chunked body that goes over the cap 413 without closing, drains it, and serves the next request', async () => {
    const results = []
    for (const c of capped) {
      const chunk = Buffer.alloc(1024 * 1024, 0x20)
      const chunks: Buffer[] = []
      for (let sent = 0; sent <= c.cap; sent += chunk.length) chunks.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'))
      chunks.push(Buffer.from('0\r\n\r\n'))
      results.push(seen(c.service, await overCapThenAnother(c, 'transfer-encoding: chunked\r\n', Buffer.concat(chunks))))
    }
    const keepAlive = `timeout=${HTTP_TIMEOUTS.keepAliveTimeoutMs / 1000}`
    expect(results).toEqual(capped.map((c) => keptAlive(c.service, keepAlive)))
  }, 120_000)

  it('answers a body read whole and refused (not JSON) with the headers of any answer, and serves the next request', async () => {
    // fastify sets `connection: close` after every body error, also once the body was read whole,
    // when nothing is left to guard against (base-app.ts's onSend takes it off)
    const results = []
    for (const c of capped) {
      const { answers, open } = await overCapThenAnother(c, 'content-length: 1\r\n', Buffer.from('{'))
      // the first answer's status is each route's own (the worker acknowledges a body that is no push envelope)
      results.push({ service: c.service, answers: answers.map((a, i) => ({ status: i === 0 ? 'any' : a.status, connection: a.headers.connection })), open })
    }
    expect(results).toEqual(
      capped.map((c) => ({
        service: c.service,
        answers: [
          { status: 'any', connection: 'keep-alive' },
          { status: 200, connection: 'keep-alive' },
        ],
        open: true,
      })),
    )
  }, 60_000)

  it('answers a body declared beyond the drain bound 413 with Connection: close before it is sent, and closes', async () => {
    for (const c of capped) {
      const conn = await rawConnect(c.port)
      await conn.write(
        `POST ${c.path} HTTP/1.1\r\nhost: ${c.host}\r\n${c.headers}content-type: application/json\r\ncontent-length: ${LINGER.maxBytes + 1}\r\n\r\n`,
      )
      await conn.write(Buffer.alloc(64 * 1024, 0x20))
      const { text } = await within(conn.closed, ANSWER_WAIT_MS, { text: conn.received(), reset: false })
      const answer = firstResponse(text)
      expect({ status: answer?.status, connection: answer?.headers.connection }, c.service).toEqual({ status: 413, connection: 'close' })
      expect(conn.socket.destroyed, c.service).toBe(true)
    }
  }, 60_000)
})
