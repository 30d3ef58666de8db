import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AddressInfo } from 'node:net'
import { PRE_AUTH_LIMITS, PreAuthBudget } from '@lsv/shared/domain/ingest/preauth-budget.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { firstResponse, rawConnect, type RawConnection } from './support/raw.ts'

/**
 * Issue 31 (attack): "Per-account budget held by one socket". One anonymous socket declaring
 * `Content-Length: 8388608` to `<account>…/v1/contacts/partnercrm?token=bogus` and then dribbling
 * bytes held the account's whole pre-authentication budget: every token-less push of the account
 * got 503 until the request timeout, and the socket could be renewed.
 *
 * Here, over loopback with real sockets, against the production limits (PRE_AUTH_LIMITS) except
 * a short rate window (so the test waits 2 s, not 5): a real token-less push of the same account
 * still gets through while the slow socket holds its 8 MiB (the account's lane), a second large
 * anonymous body cannot take that lane, and the slow socket is answered 408 and its bytes given
 * back once a window passes below the minimum rate.
 */
const MiB = 1024 * 1024
const RATE_WINDOW_MS = 2_000

describe('partner CRM: a slow anonymous socket does not hold its account', () => {
  let h: Harness
  let t: StoredTenant
  let edge: Awaited<ReturnType<typeof buildEdge>>
  let port = 0
  const budget = new PreAuthBudget({ ...PRE_AUTH_LIMITS, rateWindowMs: RATE_WINDOW_MS })
  const open: RawConnection[] = []

  beforeAll(async () => {
    h = await createHarness()
    t = await createTestTenant(h.deps)
    edge = await buildEdge(h.deps, { preAuthBudget: budget })
    await edge.listen({ port: 0, host: '127.0.0.1' })
    port = (edge.server.address() as AddressInfo).port
  })
  afterAll(async () => {
    for (const c of open) c.socket.destroy()
    await edge?.close()
    await t?.cleanup()
    await h?.close()
  })

  const waitFor = async (check: () => boolean, what: string) => {
    for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 25))
    expect(check(), what).toBe(true)
  }

  /** an anonymous partner CRM call with a bogus token declaring `length` bytes; its first bytes sent */
  async function declare(length: number): Promise<RawConnection> {
    const c = await rawConnect(port)
    open.push(c)
    await c.write(
      `POST /v1/contacts/partnercrm?token=bogus HTTP/1.1\r\nHost: ${t.host}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n{"contactId":"slow","locationId":"${t.locationId}","notes":"`,
    )
    return c
  }

  /** a real sender's push: token-less (before the cutover), a few bytes, sent whole */
  async function realPush(contactId: string): Promise<number> {
    const body = JSON.stringify({ contactId, locationId: t.locationId })
    const c = await rawConnect(port)
    open.push(c)
    await c.write(`POST /v1/contacts/partnercrm HTTP/1.1\r\nHost: ${t.host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`)
    await waitFor(() => firstResponse(c.received()) !== null, 'the real push was answered')
    return firstResponse(c.received())!.status
  }

  it('a real push gets through while one socket dribbles an 8 MiB body; the dribbler is answered 408 and gives its bytes back', async () => {
    const slow = await declare(8 * MiB)
    let dribbling = true
    const dribble = (async () => {
      while (dribbling && !slow.socket.destroyed && firstResponse(slow.received()) === null) {
        await slow.write('x'.repeat(64))
        await new Promise((r) => setTimeout(r, 100))
      }
    })()
    try {
      await heldThenAnswered(slow)
    } finally {
      dribbling = false
      await dribble
      slow.socket.destroy()
    }
  }, 60_000)

  async function heldThenAnswered(slow: RawConnection) {
    await waitFor(() => budget.accountInUse(t.account.id) === 8 * MiB, 'the slow socket holds 8 MiB')

    // a second large anonymous body cannot take the account's lane
    const second = await declare(MiB)
    await waitFor(() => firstResponse(second.received()) !== null, 'the second large body was answered')
    expect(firstResponse(second.received())!.status).toBe(503)

    // the real sender keeps its lane: accepted while the slow socket still holds its 8 MiB
    expect(await realPush('real-1')).toBe(202)
    expect(firstResponse(slow.received())).toBeNull()

    // below the minimum rate for a window: 408, and the account's bytes are back
    await waitFor(() => firstResponse(slow.received()) !== null, 'the slow socket was answered')
    const answer = firstResponse(slow.received())!
    expect(answer.status).toBe(408)
    expect(answer.body).toEqual({ ok: false, error: 'request timeout' })
    // a dripping client's connection is closed (docs/errors.md, "Timeouts"), though its body was declared within the drain bound
    expect(answer.headers.connection).toBe('close')
    await waitFor(() => budget.accountInUse(t.account.id) === 0, "the account's bytes were given back")
    expect(await realPush('real-2')).toBe(202)
  }

  it('a body that keeps arriving at a real rate is not cut off', async () => {
    const body = Buffer.alloc(256 * 1024, ' ')
    const head = `{"contactId":"steady","locationId":"${t.locationId}","notes":"`
    Buffer.from(head).copy(body)
    body.write('"}', body.length - 2)
    const c = await rawConnect(port)
    open.push(c)
    await c.write(`POST /v1/contacts/partnercrm HTTP/1.1\r\nHost: ${t.host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`)
    // 8 KiB every 250 ms (32 KiB/s, twice the minimum) over about 8 s: four rate windows
    for (let at = 0; at < body.length; at += 8 * 1024) {
      await c.write(body.subarray(at, at + 8 * 1024))
      await new Promise((r) => setTimeout(r, 250))
    }
    await waitFor(() => firstResponse(c.received()) !== null, 'answered')
    expect(firstResponse(c.received())!.status).toBe(202)
  }, 60_000)
})
