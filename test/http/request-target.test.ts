import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Writable } from 'node:stream'
import type { AddressInfo } from 'node:net'
import { createLogger } from '@lsv/shared/logging/logger.ts'
import { redactUrl } from '@lsv/shared/logging/redact.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { firstResponse, rawConnect } from './support/raw.ts'

/**
 * Issue 21 items 7 and 8: request targets with a fragment and requests with two `Host` headers
 * are refused (400 `bad request`) before any route sees them, and a credential in a URL is
 * redacted wherever it sits, fragment included. Real requests, sent as raw bytes (no client
 * library sends a fragment or a second Host), reach a listening edge-ingest whose log lines are
 * captured from the services' own logger. And what an outside probe found on 2026-11-30: an
 * HTTP/1.1 request without Host and a CONNECT got no envelope (an empty body; no answer at all),
 * and a path that does not percent-decode got 400 before the subdomain's 404 and the
 * credential's 401.
 */
describe('request targets: fragments and repeated Host', () => {
  let h: Harness
  let t: StoredTenant
  let port = 0
  let portalPort = 0
  const raw: string[] = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      raw.push(...chunk.toString().split('\n').filter(Boolean))
      callback()
    },
  })

  beforeAll(async () => {
    h = await createHarness()
    t = await createTestTenant(h.deps)
    const deps: PlatformDeps = { ...h.deps, logger: createLogger('debug', 'request-target-test', sink) }
    const app = await buildEdge(deps)
    await app.listen({ port: 0, host: '127.0.0.1' })
    port = (app.server.address() as AddressInfo).port
    const portal = await buildPortal(deps)
    await portal.listen({ port: 0, host: '127.0.0.1' })
    portalPort = (portal.server.address() as AddressInfo).port
    return async () => {
      await app.close()
      await portal.close()
    }
  })
  afterAll(async () => {
    await t?.cleanup()
    await h?.close()
  })

  /** one request as raw bytes; the status and body of the answer */
  async function send(head: string, body: string, to = port) {
    const c = await rawConnect(to)
    await c.write(`${head}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`)
    const { text } = await c.closed
    return firstResponse(text)!
  }
  const partnerBody = (id: string) => JSON.stringify({ contactId: id, locationId: t.locationId })

  it('redactUrl redacts credential parameters in the fragment as in the query, and keeps the rest byte for byte', () => {
    // mutation: redactUrl stopping at `#` (the code before issue 21) fails the first three
    expect(redactUrl('/v1/contacts/partnercrm?x=1#&token=lst_SECRET')).toBe('/v1/contacts/partnercrm?x=1#&token=[redacted]')
    expect(redactUrl('/p#token=lst_SECRET&a=%41')).toBe('/p#token=[redacted]&a=%41')
    expect(redactUrl('https://crm.example/cb?a=1#access_token=abc;x=2')).toBe('https://crm.example/cb?a=1#access_token=[redacted];x=2')
    expect(redactUrl('/p?Token=a&%74oken=b&tokens=c&a=token')).toBe('/p?Token=[redacted]&%74oken=[redacted]&tokens=c&a=token')
    // never throws on broken encodings
    expect(redactUrl('/p?%E0%A4%A=1&token=x')).toBe('/p?%E0%A4%A=1&token=[redacted]')
  })

  it('a fragment in the request target is refused with 400 and its token never reaches a line', async () => {
    const before = raw.length
    const target = `/v1/contacts/partnercrm?x=1#&token=${encodeURIComponent(t.locationToken)}`
    const res = await send(`POST ${target} HTTP/1.1\r\nhost: ${t.host}`, partnerBody('frag-1'))
    // mutation: dropping the `#` check of refuseAmbiguousTarget (http/request-target.ts) answers
    // 202: fastify's query parser reads `token` past the `#` and the token authenticates
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ ok: false, error: 'bad request' })
    const lines = raw.slice(before)
    expect(lines.some((l) => l.includes('request completed'))).toBe(true)
    expect(lines.filter((l) => l.includes(t.locationToken))).toEqual([])
    // control: the same request without the fragment is accepted
    const ok = await send(`POST /v1/contacts/partnercrm?x=1&token=${encodeURIComponent(t.locationToken)} HTTP/1.1\r\nhost: ${t.host}`, partnerBody('frag-2'))
    expect(ok.status).toBe(202)
  })

  it('two Host headers are refused with 400, whichever comes first', async () => {
    const target = `/v1/contacts/partnercrm?token=${encodeURIComponent(t.locationToken)}`
    // mutation: dropping the Host count of refuseAmbiguousTarget answers 202 (node keeps the first)
    for (const hosts of [`host: ${t.host}\r\nhost: other.example`, `host: other.example\r\nHost: ${t.host}`, `host: ${t.host}\r\nhost: ${t.host}`]) {
      const res = await send(`POST ${target} HTTP/1.1\r\n${hosts}`, partnerBody('host-1'))
      expect(res.status, hosts).toBe(400)
      expect(res.body).toEqual({ ok: false, error: 'bad request' })
    }
    const ok = await send(`POST ${target} HTTP/1.1\r\nhost: ${t.host}`, partnerBody('host-2'))
    expect(ok.status).toBe(202)
  })

  it('an HTTP/1.1 request without Host gets 400 in the envelope; HTTP/1.0 needs none', async () => {
    // mutation: node's own check (requireHostHeader back on) answers 400 with an empty chunked body
    for (const to of [port, portalPort]) {
      const res = await send('GET /healthz HTTP/1.1', '', to)
      expect(res.status).toBe(400)
      expect(res.body).toEqual({ ok: false, error: 'bad request' })
      // HTTP/1.0 has no Host rule: the same request is served
      const old = await send('GET /healthz HTTP/1.0', '', to)
      expect(old.status).toBe(200)
    }
  })

  it('a CONNECT gets 405 in the envelope and the connection closed, on every service', async () => {
    // mutation: without the connect listener (base-app.ts) node destroys the socket: no answer
    for (const to of [port, portalPort]) {
      const c = await rawConnect(to)
      await c.write(`CONNECT 127.0.0.1:${to} HTTP/1.1\r\nhost: 127.0.0.1:${to}\r\n\r\n`)
      const { text } = await c.closed
      const res = firstResponse(text)!
      expect(res.status, text).toBe(405)
      expect(res.headers.connection).toBe('close')
      expect(res.body).toEqual({ ok: false, error: 'method not allowed' })
    }
  })

  it('a path that does not percent-decode is answered as an unknown value would be: 404 for the subdomain, 401 for the credential', async () => {
    const contacts = JSON.stringify({ contacts: [{ external_id: 'x' }] })
    // mutation: without routableUrl (base-app.ts's rewriteUrl) each of these answers 400 `invalid payload`
    for (const bad of ['%E9', 'abc%zz', '%C0%AF', '%', 'a%2']) {
      const known = {
        edge: await send(`POST /v1/contacts/zz-unknown HTTP/1.1\r\nhost: ${t.host}`, contacts),
        portal: await send('GET /api/v1/contacts/zz-unknown HTTP/1.1\r\nhost: localhost', '', portalPort),
      }
      // the edge: an unknown subdomain first, then the source's credential
      const unknownHost = await send(`POST /v1/contacts/${bad} HTTP/1.1\r\nhost: nope-${t.host}`, contacts)
      expect(unknownHost.status, bad).toBe(404)
      const noToken = await send(`POST /v1/contacts/${bad} HTTP/1.1\r\nhost: ${t.host}`, contacts)
      expect(noToken.status, bad).toBe(known.edge.status)
      expect(noToken.body).toEqual(known.edge.body)
      expect(noToken.status).toBe(401)
      // the portal's read API: the key before the id
      const noKey = await send(`GET /api/v1/contacts/${bad} HTTP/1.1\r\nhost: localhost`, '', portalPort)
      expect(noKey.status, bad).toBe(401)
      expect(noKey.body).toEqual(known.portal.body)
      // a path no route serves, with a bad encoding in it: the not-found answer
      const unrouted = await send(`GET /no-such/${bad} HTTP/1.1\r\nhost: localhost`, '', portalPort)
      expect(unrouted.status, bad).toBe(404)
    }
    // the rewritten target reaches the request log redacted like any other: a token in its query
    // (routableUrl changes only the path) is in no line, in clear or percent-encoded
    const before = raw.length
    await send(`POST /v1/contacts/%E9?token=${encodeURIComponent(t.locationToken)} HTTP/1.1\r\nhost: ${t.host}`, contacts)
    const lines = raw.slice(before)
    expect(lines.some((l) => l.includes('request completed'))).toBe(true)
    expect(lines.filter((l) => l.includes(t.locationToken) || l.includes(encodeURIComponent(t.locationToken)))).toEqual([])
    // and as the client sent it, not as routableUrl rewrote it for the router
    expect(lines.find((l) => l.includes('request completed'))).toContain('/v1/contacts/%E9?token=[redacted]')
    // a path that decodes is routed as before: an encoded character of a source id is decoded
    const encoded = await send(`POST /v1/contacts/%7A%7A-unknown HTTP/1.1\r\nhost: ${t.host}`, contacts)
    expect(encoded.status).toBe(401)
  })
})
