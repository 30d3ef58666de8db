import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AddressInfo } from 'node:net'
import pino from 'pino'
import { buildBaseApp, type App } from '@lsv/shared/http/base-app.ts'
import { HTTP_TIMEOUTS } from '@lsv/shared/http/timeouts.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { buildApp as buildWorker } from '../../services/upsert-worker/src/app.ts'
import { buildApp as buildDispatcher } from '../../services/webhook-dispatcher/src/app.ts'
import { firstResponse, rawConnect, within } from './support/raw.ts'

/**
 * Header, request (body) and keep-alive timeouts (shared/src/http/timeouts.ts), and node's own
 * 400/408/431 in the contract's envelope. The base app every service starts from is run with
 * short timeouts (header 1 s, whole request 2 s, keep-alive 1 s, checked every 200 ms); clients
 * drip bytes over a raw socket. Every wait is bounded (a few seconds): a server without the
 * timeouts fails the test instead of hanging it.
 */
describe('connection timeouts and framework errors', () => {
  let app: App
  let port = 0
  const BOUND_MS = 8_000

  beforeAll(async () => {
    app = buildBaseApp({
      logger: pino({ level: 'silent' }),
      timeouts: { headersTimeoutMs: 1_000, requestTimeoutMs: 2_000, keepAliveTimeoutMs: 1_000, connectionsCheckingIntervalMs: 200 },
    })
    app.post('/echo', async (request) => ({ ok: true, size: request.rawBody?.length ?? 0 }))
    await app.listen({ port: 0, host: '127.0.0.1' })
    port = (app.server.address() as AddressInfo).port
  })
  afterAll(async () => {
    await app?.close()
  })

  it('headers dripped slower than the header timeout: 408 {ok:false, error:"request timeout"}, connection closed', async () => {
    const c = await rawConnect(port)
    void c.drip(`POST /echo HTTP/1.1\r\nHost: x\r\n${'X-Slow: 1\r\n'.repeat(50)}\r\n`, 250)
    const { text } = await within(c.closed, BOUND_MS, { text: 'still open', reset: false })
    c.socket.destroy()
    const res = firstResponse(text)
    expect(res?.status, text).toBe(408)
    expect(res?.body).toEqual({ ok: false, error: 'request timeout' })
    expect(res?.headers['content-type']).toBe('application/json; charset=utf-8')
  })

  it('a body dripped slower than the request timeout: 408 in the envelope, connection closed', async () => {
    const c = await rawConnect(port)
    await c.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n')
    void c.drip(`{"pad":"${'p'.repeat(190)}"}`, 250)
    const { text } = await within(c.closed, BOUND_MS, { text: 'still open', reset: false })
    c.socket.destroy()
    const res = firstResponse(text)
    expect(res?.status, text).toBe(408)
    expect(res?.body).toEqual({ ok: false, error: 'request timeout' })
  })

  it('headers over the size limit: 431 in the envelope', async () => {
    const c = await rawConnect(port)
    await c.write(`POST /echo HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(HTTP_TIMEOUTS.maxHeaderSize + 1024)}\r\nContent-Length: 2\r\n\r\n{}`)
    const { text } = await within(c.closed, BOUND_MS, { text: 'still open', reset: false })
    const res = firstResponse(text)
    expect(res?.status, text).toBe(431)
    expect(res?.body).toEqual({ ok: false, error: 'request header fields too large' })
  })

  it('a message that is not HTTP: 400 in the envelope', async () => {
    const c = await rawConnect(port)
    await c.write('THIS IS NOT HTTP\r\n\r\n')
    const { text } = await within(c.closed, BOUND_MS, { text: 'still open', reset: false })
    const res = firstResponse(text)
    expect(res?.status, text).toBe(400)
    expect(res?.body).toEqual({ ok: false, error: 'bad request' })
  })

  it('an idle keep-alive connection is closed after the keep-alive timeout; a prompt request is answered', async () => {
    const c = await rawConnect(port)
    await c.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}')
    const { text } = await within(c.closed, BOUND_MS, { text: 'still open', reset: false })
    c.socket.destroy()
    const res = firstResponse(text)
    expect(res?.status, text).toBe(200)
    expect(res?.body).toEqual({ ok: true, size: 2 })
    expect(text).not.toBe('still open')
  })

  it('every service listens with the production timeouts (timeouts.ts)', async () => {
    const deps = await createTestDeps()
    try {
      for (const build of [buildEdge, buildPortal, buildWorker, buildDispatcher]) {
        const service = await build(deps)
        try {
          expect(service.server.headersTimeout).toBe(HTTP_TIMEOUTS.headersTimeoutMs)
          expect(service.server.requestTimeout).toBe(HTTP_TIMEOUTS.requestTimeoutMs)
          expect(service.server.keepAliveTimeout).toBe(HTTP_TIMEOUTS.keepAliveTimeoutMs)
          expect((service.server as unknown as { maxHeaderSize?: number }).maxHeaderSize).toBe(HTTP_TIMEOUTS.maxHeaderSize)
        } finally {
          await service.close()
        }
      }
    } finally {
      await deps.cleanup()
    }
  })
})
