import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Writable } from 'node:stream'
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createLogger } from '@lsv/shared/logging/logger.ts'
import { buildBaseApp } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

/**
 * Log lines as Cloud Logging reads them, captured from the services' own logger
 * (shared/src/logging/logger.ts) while real requests reach listening servers:
 * - every line of a request carries `logging.googleapis.com/trace` and `…/spanId` when a trace
 *   header is sent and a project is configured (items 17);
 * - one request line in the `httpRequest` shape, its URL without credentials (items 11, 17);
 * - no credential (query token, key, token header, cookie) appears on any line (item 11);
 * - the logged client address follows X-Forwarded-For only as far as TRUSTED_PROXY_HOPS says,
 *   and the request id is our own: never a caller's x-request-id (item 16), nor its trace header
 *   (issue 21 item 8: the trace is logged as the trace, apart from the id).
 */
const PROJECT = 'lsv-log-test'
const TRACE = '0af7651916cd43dd8448eb211c80319c'
const SPAN = 'b7ad6b7169203331'

type Line = Record<string, unknown> & { message?: string; reqId?: string; httpRequest?: Record<string, unknown> }

describe("request logs in Cloud Logging's shape", () => {
  let h: Harness
  let t: StoredTenant
  const lines: Line[] = []
  const raw: string[] = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const text of chunk.toString().split('\n').filter(Boolean)) {
        raw.push(text)
        lines.push(JSON.parse(text) as Line)
      }
      callback()
    },
  })
  const servers: Array<{ close(): Promise<unknown> }> = []

  async function listen(build: typeof buildEdge, hops: number, level = 'info'): Promise<number> {
    const logger = createLogger(level, 'log-test', sink)
    const deps: PlatformDeps = { ...h.deps, logger, config: { ...h.deps.config, gcpProject: PROJECT, trustedProxyHops: hops } }
    const app = await build(deps)
    await app.listen({ port: 0, host: '127.0.0.1' })
    servers.push(app)
    return (app.server.address() as AddressInfo).port
  }

  function send(
    port: number,
    options: { method?: string; path: string; host: string; headers?: Record<string, string>; body?: string },
  ): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: options.path,
          method: options.method ?? 'POST',
          headers: {
            host: options.host,
            'user-agent': 'log-test/1',
            ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
            ...options.headers,
          },
        },
        (res) => {
          let body = ''
          res.on('data', (d) => {
            body += d
          })
          res.on('end', () => resolve({ status: res.statusCode!, body }))
        },
      )
      req.on('error', reject)
      req.end(options.body)
    })
  }

  /** the lines of one request, found by its request id */
  const linesOf = (reqId: string) => lines.filter((l) => l.reqId === reqId)
  const completed = (reqId: string) => linesOf(reqId).find((l) => l.message === 'request completed')
  /** the id of the request whose lines carry `trace`/`span`: ours (a UUID), found through the trace */
  const idOfTraced = (span: string) => {
    const ids = new Set(
      lines
        .filter((l) => l['logging.googleapis.com/trace'] === `projects/${PROJECT}/traces/${TRACE}` && l['logging.googleapis.com/spanId'] === span)
        .map((l) => l.reqId),
    )
    expect(ids.size, 'the lines of one traced request share one id').toBe(1)
    const [id] = ids
    // mutation: genReqId taking the trace (`${traceId}-${spanId}`) again fails here
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    return id!
  }

  let edgePort = 0
  beforeAll(async () => {
    h = await createHarness()
    t = await createTestTenant(h.deps)
    edgePort = await listen(buildEdge, 0)
  })
  afterAll(async () => {
    for (const s of servers) await s.close()
    await t?.cleanup()
    await h?.close()
  })

  it('traceparent: every line of the request carries the trace and span; one httpRequest line; the request id is our own', async () => {
    const body = JSON.stringify({ contactId: 'log-1', locationId: t.locationId })
    const res = await send(edgePort, {
      path: `/v1/contacts/partnercrm?token=${encodeURIComponent(t.locationToken)}&x=1`,
      host: t.host,
      body,
      headers: { traceparent: `00-${TRACE}-${SPAN}-01`, 'x-request-id': 'caller-chosen-id', referer: `https://crm.example/hook?token=${t.locationToken}` },
    })
    expect(res.status, res.body).toBe(202)
    const reqId = idOfTraced(SPAN)
    expect(lines.some((l) => l.reqId === 'caller-chosen-id')).toBe(false)
    const mine = linesOf(reqId)
    expect(mine.length).toBeGreaterThan(0)
    for (const line of mine) {
      expect(line['logging.googleapis.com/trace']).toBe(`projects/${PROJECT}/traces/${TRACE}`)
      expect(line['logging.googleapis.com/spanId']).toBe(SPAN)
      expect(line['logging.googleapis.com/trace_sampled']).toBe(true)
    }
    const line = completed(reqId)!
    expect(line.severity).toBe('INFO')
    expect(line.httpRequest).toEqual({
      requestMethod: 'POST',
      requestUrl: `http://${t.host}/v1/contacts/partnercrm?token=[redacted]&x=1`,
      requestSize: String(Buffer.byteLength(body)),
      status: 202,
      responseSize: expect.stringMatching(/^\d+$/),
      userAgent: 'log-test/1',
      remoteIp: '127.0.0.1',
      referer: 'https://crm.example/hook?token=[redacted]',
      latency: expect.stringMatching(/^\d+\.\d{3}s$/),
      protocol: 'HTTP/1.1',
    })
    expect(raw.filter((text) => text.includes(t.locationToken))).toEqual([])
  })

  it('at debug level the incoming request has its line too, its URL without the credential; at info it has none', async () => {
    const debugPort = await listen(buildEdge, 0, 'debug')
    const path = `/v1/contacts/partnercrm?token=${encodeURIComponent(t.locationToken)}&y=2`
    const body = JSON.stringify({ contactId: 'log-debug', locationId: t.locationId })
    const incoming = () => lines.filter((l) => l.message === 'incoming request' && l.httpRequest?.requestUrl === '/v1/contacts/partnercrm?token=[redacted]&y=2')
    expect((await send(edgePort, { path, host: t.host, body })).status).toBe(202)
    expect(incoming()).toEqual([])
    expect((await send(debugPort, { path, host: t.host, body })).status).toBe(202)
    expect(incoming()).toHaveLength(1)
    expect(incoming()[0]!.httpRequest).toEqual({ requestMethod: 'POST', requestUrl: '/v1/contacts/partnercrm?token=[redacted]&y=2' })
    expect(raw.filter((text) => text.includes(t.locationToken))).toEqual([])
  })

  it('X-Cloud-Trace-Context: the decimal span becomes 16 hex digits; lines the domain writes for the request carry it too', async () => {
    const res = await send(edgePort, {
      path: '/v1/contacts/partnercrm',
      host: t.host,
      body: JSON.stringify({ contactId: 'log-2', locationId: t.locationId }),
      headers: { 'x-cloud-trace-context': `${TRACE}/12345;o=0` },
    })
    expect(res.status).toBe(202)
    const reqId = idOfTraced('0000000000003039')
    const flag = linesOf(reqId).find((l) => l.flag === 'partnercrm_tokenless')
    expect(flag, 'the token-less call is flagged on a line of the request').toBeDefined()
    for (const line of linesOf(reqId)) {
      expect(line['logging.googleapis.com/trace']).toBe(`projects/${PROJECT}/traces/${TRACE}`)
      expect(line['logging.googleapis.com/spanId']).toBe('0000000000003039')
      expect(line['logging.googleapis.com/trace_sampled']).toBe(false)
    }
  })

  it("lines written through another logger while a request is handled (domain code's deps.logger) carry its trace too, once", async () => {
    const logger = createLogger('info', 'log-test', sink)
    const app = buildBaseApp({ logger, gcpProject: PROJECT })
    app.post('/domain', async (request) => {
      await new Promise((resolve) => setTimeout(resolve, 5))
      logger.warn({ step: 'domain', size: request.rawBody?.length }, 'logged by domain code')
      request.log.info({ step: 'route' }, 'logged by the route')
      return { ok: true }
    })
    await app.listen({ port: 0, host: '127.0.0.1' })
    servers.push(app)
    const port = (app.server.address() as AddressInfo).port
    const before = raw.length
    expect((await send(port, { path: '/domain', host: 'localhost', body: '{"a":1}', headers: { 'x-cloud-trace-context': `${TRACE}/1;o=1` } })).status).toBe(200)
    // and a request without a trace leaves the next lines alone
    expect((await send(port, { path: '/domain', host: 'localhost', body: '{"a":1}' })).status).toBe(200)
    const texts = raw.slice(before)
    const traced = texts.filter((text) => text.includes(`traces/${TRACE}`))
    const domain = traced.find((text) => text.includes('logged by domain code'))
    expect(domain, 'the domain line carries the trace').toBeDefined()
    expect(JSON.parse(domain!)['logging.googleapis.com/spanId']).toBe('0000000000000001')
    for (const text of traced) expect(text.split('"logging.googleapis.com/trace"').length - 1).toBe(1)
    const untraced = texts.filter((text) => text.includes('logged by domain code') && !text.includes(`traces/${TRACE}`))
    expect(untraced).toHaveLength(1)
    expect(untraced[0]).not.toContain('logging.googleapis.com/trace')
  })

  it('lines written through deps.logger while a request is handled carry its request id, with or without a trace', async () => {
    const logger = createLogger('info', 'log-test', sink)
    const app = buildBaseApp({ logger })
    app.post('/domain-id', async (request) => {
      await new Promise((resolve) => setTimeout(resolve, 5))
      logger.warn({ step: 'domain-id' }, 'logged by domain code for a request')
      return { ok: true, id: request.id }
    })
    await app.listen({ port: 0, host: '127.0.0.1' })
    servers.push(app)
    const port = (app.server.address() as AddressInfo).port
    const ids: string[] = []
    for (const headers of [{}, { traceparent: `00-${TRACE}-${SPAN}-01` }] as Array<Record<string, string>>) {
      const res = await send(port, { path: '/domain-id', host: 'localhost', body: '{}', headers })
      expect(res.status).toBe(200)
      ids.push((JSON.parse(res.body) as { id: string }).id)
    }
    for (const reqId of ids) {
      const domain = linesOf(reqId).filter((l) => l.message === 'logged by domain code for a request')
      expect(domain, `the domain line of request ${reqId}`).toHaveLength(1)
      expect(completed(reqId), 'and the request line, with the same id').toBeDefined()
    }
    // outside any request, a line carries no request id
    logger.warn('logged outside a request')
    expect(lines.findLast((l) => l.message === 'logged outside a request')?.reqId).toBeUndefined()
  })

  it('credential headers never reach a line, whatever the answer', async () => {
    const secrets = {
      authorization: `Bearer ${t.key}`,
      'x-api-key': `lsk_${'z'.repeat(43)}`,
      cookie: 'lsv_session=secret-cookie-value',
      'x-webhook-token': t.sourceToken,
    }
    await send(edgePort, { path: '/v1/contacts', host: t.host, body: '{"contacts":[{"external_id":"x"}]}', headers: { authorization: secrets.authorization } })
    await send(edgePort, { path: '/v1/contacts', host: t.host, body: '{}', headers: secrets })
    await send(edgePort, { path: `/v1/contacts/${t.webhook.id}?token=${t.sourceToken}`, host: t.host, body: '{"contacts":[]}' })
    for (const value of [t.key, 'z'.repeat(43), 'secret-cookie-value', t.sourceToken]) {
      expect(raw.filter((text) => text.includes(value))).toEqual([])
    }
  })

  it('an object logged with headers has its credential headers redacted, wherever it sits', async () => {
    const logger = createLogger('info', 'log-test', sink)
    const headers = {
      authorization: 'Bearer A-SECRET',
      'x-api-key': 'K-SECRET',
      'x-webhook-token': 'T-SECRET',
      cookie: 'C-SECRET',
      'proxy-authorization': 'P-SECRET',
      'x-serverless-authorization': 'S-SECRET',
      accept: 'kept',
    }
    logger.info({ req: { headers }, request: { headers }, headers, upstream: { headers } }, 'headers logged')
    const line = raw.at(-1)!
    expect(line).toContain('"accept":"kept"')
    for (const secret of ['A-SECRET', 'K-SECRET', 'T-SECRET', 'C-SECRET', 'P-SECRET', 'S-SECRET']) expect(line).not.toContain(secret)
    logger.info({ req: { method: 'GET', url: '/v1/contacts/src_1?token=lst_Q-SECRET&page=2' } }, 'request object')
    expect(raw.at(-1)).not.toContain('Q-SECRET')
    expect(raw.at(-1)).toContain('token=[redacted]&page=2')
  })

  it('X-Forwarded-For is believed only as far as TRUSTED_PROXY_HOPS; x-request-id is never the request id', async () => {
    const xff = { 'x-forwarded-for': '198.51.100.7, 203.0.113.9' }
    const ipAt = async (port: number) => {
      const before = lines.length
      const res = await send(port, { method: 'GET', path: '/healthz', host: 'localhost', headers: { ...xff, 'x-request-id': 'caller-chosen-id' } })
      expect(res.status).toBe(200)
      const line = lines.slice(before).find((l) => l.message === 'request completed')!
      expect(line.reqId).not.toBe('caller-chosen-id')
      expect(line.reqId).toMatch(/^[0-9a-f-]{36}$/)
      return line.httpRequest!.remoteIp
    }
    expect(await ipAt(edgePort)).toBe('127.0.0.1') // 0 hops: the socket's peer
    expect(await ipAt(await listen(buildPortal, 1))).toBe('203.0.113.9') // 1 hop: the entry our proxy appended
    expect(await ipAt(await listen(buildEdge, 2))).toBe('198.51.100.7') // load balancer + Cloud Run
  })
})
