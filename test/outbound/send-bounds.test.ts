/**
 * One send's bounds (adapters/outbound-http/send.ts), against a real loopback receiver: sends
 * share one deadline sweep instead of a timer each (AbortSignal.timeout's could not even be
 * cleared: every delivery left one to fire 15 s later, thousands pending at once under load), and
 * the bounded read still keeps the first bytes of the answer and hangs up on a body past the cap.
 * The deadline itself, with a short bound, is test/outbound/send-deadline.test.ts; the hostile
 * receivers at the real bound (hang, drip, endless body) are test/reliability/webhook-receivers.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHook } from 'node:async_hooks'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Agent } from 'undici'
import { EXCERPT_BYTES, MAX_RESPONSE_BYTES, postOnce, SEND_TIMEOUT_MS, targetOf } from '@lsv/shared/adapters/outbound-http/send.ts'
import { createDeadlines } from '@lsv/shared/adapters/outbound-http/deadlines.ts'

let server: Server
let origin: string
const agent = new Agent({ connections: 8 })
let bytesWritten = 0
/** a bound of the sender's own length, with a sweep period no other timer here has */
const SWEEP_MS = 37
const deadlines = createDeadlines({ boundMs: SEND_TIMEOUT_MS, everyMs: SWEEP_MS })

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      if (req.url === '/big') {
        // an endless answer: the send ends only if the sender stops reading at its cap and hangs up
        const chunk = Buffer.alloc(16 * 1024, 'b')
        res.writeHead(200, { 'content-type': 'text/plain' })
        const write = () => {
          while (!res.destroyed) {
            bytesWritten += chunk.length
            if (!res.write(chunk)) return void res.once('drain', write)
          }
        }
        write()
        return
      }
      res.writeHead(202, { 'content-type': 'text/plain', 'retry-after': '7' }).end(`ok ${req.url}`)
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  await agent.close()
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
})

describe('one send', () => {
  it('sets no timer of its own: sends under way share one sweep, which stops once they are answered', async () => {
    const timers: string[] = []
    const hook = createHook({
      init: (_id, type, _trigger, resource) => {
        // the sockets' own keep-alive and undici's fast timers are others: count timers of the
        // send bound's duration (a timer per send) and of the shared sweep's period
        const ms = (resource as { _idleTimeout?: number })._idleTimeout
        if (type === 'Timeout' && (ms === SEND_TIMEOUT_MS || ms === SWEEP_MS)) timers.push(`${ms} ms`)
      },
    }).enable()
    let answers: Awaited<ReturnType<typeof postOnce>>[]
    try {
      answers = await Promise.all(Array.from({ length: 10 }, (_, i) => postOnce(agent, `${origin}/hook-${i}`, Buffer.from('{}'), {}, deadlines)))
    } finally {
      hook.disable()
    }
    expect(answers.map((a) => a.statusCode)).toEqual(Array(10).fill(202))
    // the old sender set one 15 s timer per send (ten here)
    expect(timers).toEqual([`${SWEEP_MS} ms`])
    expect(deadlines.size).toBe(0)
    // the sweep notices nothing is under way at its next turn, and clears its interval
    await new Promise((r) => setTimeout(r, SWEEP_MS * 3))
    expect(deadlines.sweeping).toBe(false)
  })

  it('keeps the answer’s first bytes and headers', async () => {
    const answer = await postOnce(agent, `${origin}/hook-x`, Buffer.from('{}'), {})
    expect(answer).toMatchObject({ statusCode: 202, error: null, excerpt: 'ok /hook-x', retryAfter: '7' })
    expect(answer.headers?.['content-type']).toBe('text/plain')
  })

  it('reads at most the cap of an endless answer, keeps an excerpt, and hangs up', async () => {
    const answer = await postOnce(agent, `${origin}/big`, Buffer.from('{}'), {})
    expect(answer.statusCode).toBe(200)
    expect(answer.error).toBeNull()
    expect(answer.excerpt).toBe('b'.repeat(EXCERPT_BYTES))
    expect(bytesWritten).toBeGreaterThanOrEqual(MAX_RESPONSE_BYTES)
  })
})

describe('where a send goes', () => {
  it('parses an endpoint’s URL once: the same origin and request target for every delivery to it', () => {
    const url = 'https://hooks.example:8443/in/v1?key=abc#frag'
    const first = targetOf(url)
    // query kept, fragment never sent (as undici's request(url) derives them)
    expect(first).toEqual({ origin: 'https://hooks.example:8443', path: '/in/v1?key=abc' })
    // mutation: parsing on every send gives an equal but new object here
    expect(targetOf(url)).toBe(first)
    expect(targetOf('http://hooks.example')).toEqual({ origin: 'http://hooks.example', path: '/' })
  })

  it('fails a URL undici refuses with undici’s own code, and sends nothing', async () => {
    expect(targetOf('ftp://hooks.example/in')).toBeNull()
    expect(targetOf('not a url')).toBeNull()
    const answer = await postOnce(agent, 'ftp://hooks.example/in', Buffer.from('{}'), {})
    expect(answer).toMatchObject({ statusCode: null, error: 'UND_ERR_INVALID_ARG' })
  })

  it('sends to the path and query of the URL', async () => {
    const answer = await postOnce(agent, `${origin}/hook-q?x=1#not-sent`, Buffer.from('{}'), {})
    expect(answer.excerpt).toBe('ok /hook-q?x=1')
  })
})
