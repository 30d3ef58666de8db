import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Writable } from 'node:stream'
import type { AddressInfo } from 'node:net'
import { createLogger } from '@lsv/shared/logging/logger.ts'
import { redactUrl } from '@lsv/shared/logging/redact.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { firstResponse, rawConnect } from './support/raw.ts'

/**
 * Issue 21 items 7 and 8: request targets with a fragment and requests with two `Host` headers
 * are refused (400 `bad request`) before any route sees them, and a credential in a URL is
 * redacted wherever it sits, fragment included. Real requests, sent as raw bytes (no client
 * library sends a fragment or a second Host), reach a listening edge-ingest whose log lines are
 * captured from the services' own logger.
 */
describe('request targets: fragments and repeated Host', () => {
  let h: Harness
  let t: StoredTenant
  let port = 0
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
    return () => app.close()
  })
  afterAll(async () => {
    await t?.cleanup()
    await h?.close()
  })

  /** one request as raw bytes; the status and body of the answer */
  async function send(head: string, body: string) {
    const c = await rawConnect(port)
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
})
