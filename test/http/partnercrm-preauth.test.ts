import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AddressInfo } from 'node:net'
import { request } from 'node:http'
import { PreAuthBudget } from '@lsv/shared/domain/ingest/preauth-budget.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { firstResponse, rawConnect, within, type RawConnection } from './support/raw.ts'

/**
 * Contract 4.5 names the location in the body, so a partner CRM call is read before it can be
 * authenticated. What anonymous callers can make the edge hold is bounded (item 9): bodies of
 * callers not yet authenticated are reserved against a byte budget per instance and per account;
 * what does not fit is answered at once, 503 with Retry-After, before its body is sent. A caller
 * whose token identifies its location by hash is authenticated before its body and never waits
 * on the budget. The budget here is small (2 MiB per account, 3 MiB per instance) so the bound
 * shows with bodies of 1 MiB.
 */
const MiB = 1024 * 1024
const BUSY = { ok: false, error: 'temporarily unavailable' }

describe('partner CRM: bounded pre-authentication buffering', () => {
  let h: Harness
  let a: StoredTenant
  let b: StoredTenant
  let edge: Awaited<ReturnType<typeof buildEdge>>
  let port = 0
  const budget = new PreAuthBudget({ instanceBytes: 3 * MiB, accountBytes: 2 * MiB, retryAfterSeconds: 5 })
  const open: RawConnection[] = []

  beforeAll(async () => {
    h = await createHarness()
    a = await createTestTenant(h.deps)
    b = await createTestTenant(h.deps)
    edge = await buildEdge(h.deps, { preAuthBudget: budget })
    await edge.listen({ port: 0, host: '127.0.0.1' })
    port = (edge.server.address() as AddressInfo).port
  })
  afterAll(async () => {
    for (const c of open) c.socket.destroy()
    await edge?.close()
    await a?.cleanup()
    await b?.cleanup()
    await h?.close()
  })

  /** an anonymous partner CRM call declaring a 1 MiB body, of which only the first bytes are sent */
  async function startAnonymous(t: StoredTenant, headers = ''): Promise<{ c: RawConnection; rest: Buffer }> {
    const body = Buffer.alloc(MiB, ' ')
    Buffer.from(`{"contactId":"c-1","locationId":"${t.locationId}","notes":"`).copy(body)
    body.write('"}', MiB - 2)
    const c = await rawConnect(port)
    open.push(c)
    await c.write(`POST /v1/contacts/partnercrm HTTP/1.1\r\nHost: ${t.host}\r\nContent-Type: application/json\r\nContent-Length: ${MiB}\r\n${headers}\r\n`)
    await c.write(body.subarray(0, 1024))
    return { c, rest: body.subarray(1024) }
  }

  const waitFor = async (check: () => boolean, what: string) => {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 25))
    expect(check(), what).toBe(true)
  }
  const answerOf = async (c: RawConnection) => {
    await waitFor(() => firstResponse(c.received()) !== null, 'an answer arrived')
    return firstResponse(c.received())!
  }

  async function healthz(): Promise<number> {
    return new Promise((resolve, reject) => {
      request({ host: '127.0.0.1', port, path: '/healthz' }, (res) => {
        res.resume()
        resolve(res.statusCode!)
      })
        .on('error', reject)
        .end()
    })
  }

  async function tokenPush(t: StoredTenant, contactId: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/v1/contacts/partnercrm',
          method: 'POST',
          headers: { host: t.host, 'content-type': 'application/json', 'x-webhook-token': t.locationToken },
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
      req.end(JSON.stringify({ contactId, locationId: t.locationId }))
    })
  }

  it('anonymous bodies beyond the per-account and per-instance budget are answered 503 at once, before their bodies are sent', async () => {
    // account A: two 1 MiB bodies fit its 2 MiB, the third does not
    const a1 = await startAnonymous(a)
    await waitFor(() => budget.accountInUse(a.account.id) === MiB, 'first body reserved')
    const a2 = await startAnonymous(a)
    await waitFor(() => budget.accountInUse(a.account.id) === 2 * MiB, 'second body reserved')
    const a3 = await startAnonymous(a)
    const refused = await answerOf(a3.c)
    expect(refused.status).toBe(503)
    expect(refused.body).toEqual(BUSY)
    expect(refused.headers['retry-after']).toBe('5')
    expect(a1.c.received()).toBe('') // the admitted ones are still being read, unanswered

    // account B: one more fits the instance (3 MiB), the next does not
    const b1 = await startAnonymous(b)
    await waitFor(() => budget.inUse === 3 * MiB, 'instance budget full')
    const b2 = await startAnonymous(b)
    const refusedB = await answerOf(b2.c)
    expect(refusedB.status).toBe(503)
    expect(refusedB.body).toEqual(BUSY)

    // meanwhile: health answers, and a sender presenting its token is not held back by the budget
    expect(await healthz()).toBe(200)
    const withToken = await tokenPush(a, 'c-token')
    expect(withToken.status, withToken.body).toBe(202)

    // the admitted bodies complete and are answered (token-less, before the cutover: accepted)
    for (const { c, rest } of [a1, a2, b1]) {
      await c.write(rest)
      const res = await answerOf(c)
      expect(res.status).toBe(202)
    }
    await waitFor(() => budget.inUse === 0, 'every reservation released')
    expect(budget.peak).toBeLessThanOrEqual(budget.limits.instanceBytes)
    expect(budget.peak).toBe(3 * MiB)
  })

  it('a body without a declared length is reserved chunk by chunk: past the budget it is cut off with 503', async () => {
    const c = await rawConnect(port)
    open.push(c)
    await c.write(`POST /v1/contacts/partnercrm HTTP/1.1\r\nHost: ${a.host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`)
    const chunk = Buffer.alloc(256 * 1024, ' ')
    const frame = (data: Buffer) => Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')])
    await c.write(frame(Buffer.from(`{"contactId":"c-2","locationId":"${a.locationId}","notes":"`)))
    for (let i = 0; i < 12 && firstResponse(c.received()) === null && !c.socket.destroyed; i++) await c.write(frame(chunk))
    const res = await answerOf(c)
    expect(res.status).toBe(503)
    expect(res.body).toEqual(BUSY)
    await waitFor(() => budget.inUse === 0, 'released')
    expect(budget.peak).toBeLessThanOrEqual(budget.limits.instanceBytes)
  })

  it('a token that identifies no location of the account does not skip the budget', async () => {
    const held = [await startAnonymous(a, 'X-Webhook-Token: lst_not-a-token\r\n'), await startAnonymous(a, 'X-Webhook-Token: lst_not-a-token\r\n')]
    await waitFor(() => budget.accountInUse(a.account.id) === 2 * MiB, 'both reserved')
    const third = await startAnonymous(a, `X-Webhook-Token: ${b.locationToken}\r\n`)
    const res = await answerOf(third.c)
    expect(res.status).toBe(503)
    for (const { c, rest } of held) {
      await c.write(rest)
      expect((await answerOf(c)).status).toBe(401)
    }
    await waitFor(() => budget.inUse === 0, 'released')
  })

  it('refused calls leave nothing reserved, and the edge keeps answering', async () => {
    const { c } = await startAnonymous(a)
    await waitFor(() => budget.inUse === MiB, 'reserved while the body arrives')
    c.socket.destroy() // the client gives up mid-body
    await within(c.closed, 5_000, { text: '', reset: false })
    await waitFor(() => budget.inUse === 0, 'released after the client went away')
    expect(await healthz()).toBe(200)
  })
})
