/**
 * The JSON body reader (shared/src/http/raw-body.ts): fastify's own checks, one Buffer per body,
 * and no copy of a body that came as one chunk owning all of its memory (docs/performance.md,
 * "Fifth pass": copying an 8 MiB batch handed over in one piece was about 5 % of the edge's CPU
 * per batch, and its 8 MiB of fresh external memory brought full garbage collections sooner).
 * Mutation: oneBuffer always concatenating → the first test fails.
 */
import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pino from 'pino'
import { buildBaseApp, type App } from '@lsv/shared/http/base-app.ts'

describe('the JSON body reader', () => {
  let app: App
  /** the last body bytes a route saw */
  let seen: Buffer | undefined

  beforeAll(async () => {
    app = buildBaseApp({ logger: pino({ level: 'silent' }), bodyLimit: 1024 * 1024 })
    app.post('/echo', async (request, reply) => {
      seen = request.rawBody
      return reply.code(200).send({ records: (request.body as { records: unknown[] }).records.length })
    })
    await app.ready()
  })
  afterAll(async () => {
    await app?.close()
  })

  const body = (records: number) => Buffer.from(JSON.stringify({ records: Array.from({ length: records }, (_, i) => ({ i, pad: 'x'.repeat(100) })) }))
  const post = (payload: Buffer | Readable) => app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload })

  it('keeps a body that came as one chunk owning its memory as it is (no copy)', async () => {
    const payload = body(500)
    expect(payload.byteLength).toBe(payload.buffer.byteLength) // not pooled: it owns its memory
    const res = await post(payload)
    expect(res.json()).toEqual({ records: 500 })
    expect(seen).toBe(payload)
  })

  it('copies a chunk that is a view into a larger buffer, so the body never keeps the larger one alive', async () => {
    const whole = Buffer.concat([Buffer.from('garbage before'), body(200), Buffer.from('garbage after')])
    const payload = whole.subarray('garbage before'.length, whole.length - 'garbage after'.length)
    const res = await post(payload)
    expect(res.json()).toEqual({ records: 200 })
    expect(seen).not.toBe(payload)
    expect(seen!.equals(payload)).toBe(true)
    expect(seen!.buffer).not.toBe(whole.buffer)
  })

  it('joins a body that came in several chunks into one Buffer', async () => {
    const payload = body(300)
    const pieces = [payload.subarray(0, 1000), payload.subarray(1000, 20_000), payload.subarray(20_000)]
    const res = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json', 'content-length': String(payload.length) },
      payload: Readable.from(pieces),
    })
    expect(res.json()).toEqual({ records: 300 })
    expect(seen!.equals(payload)).toBe(true)
  })

  it('refuses a body over the limit, declared or streamed, and a length that differs from the declared one', async () => {
    const big = Buffer.alloc(1024 * 1024 + 1, 0x20)
    expect((await post(big)).statusCode).toBe(413)
    const streamed = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json' },
      payload: Readable.from([big.subarray(0, 600_000), big.subarray(600_000)]),
    })
    expect(streamed.statusCode).toBe(413)
    const short = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json', 'content-length': '100' },
      payload: Readable.from([Buffer.from('{"records":[]}')]),
    })
    expect(short.statusCode).toBe(400)
  })
})
