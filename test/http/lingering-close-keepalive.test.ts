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
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { rawConnect } from './support/raw.ts'

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
