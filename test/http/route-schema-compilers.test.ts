/**
 * The route schema compilers keep what they compiled for the process, keyed by the schema's
 * content (shared/src/http/route-schema-compilers.ts). What a route answers must not change:
 * each route is validated and serialized by its own schema, whichever app or route compiled an
 * equal one first. Driven through two apps built from the base app (each app its own compilers,
 * the kept functions shared), over real sockets with fetch.
 *
 * Mutations each of these catches: a key without the schema (every route gets the first
 * validator), a key without the part (a body validated with the coercing querystring validator,
 * or the reverse), a serializer kept per route path instead of per schema, and a kept function
 * that is not the one the schema compiles to.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AddressInfo } from 'node:net'
import pino from 'pino'
import { Type } from 'typebox'
import { buildBaseApp, type App } from '@lsv/shared/http/base-app.ts'
import { createSerializerCompiler, createValidatorCompiler } from '@lsv/shared/http/route-schema-compilers.ts'

const logger = pino({ level: 'silent' })
const short = () => Type.Object({ name: Type.String({ maxLength: 3 }) }, { additionalProperties: false })
const long = () => Type.Object({ name: Type.String({ maxLength: 5 }) }, { additionalProperties: false })
const count = () => Type.Object({ n: Type.Integer() })
const apps: App[] = []
const base: string[] = []

/** One app: a route per schema, each schema a fresh object of the same content as in the other app. */
function app(): App {
  const a = buildBaseApp({ logger })
  a.post('/short', { schema: { body: short() } }, async (request) => ({ got: request.body.name }))
  a.post('/long', { schema: { body: long() } }, async (request) => ({ got: request.body.name }))
  // the same object shape as a querystring (coerced: "5" is 5) and as a body (not coerced)
  a.get('/count', { schema: { querystring: count() } }, async (request) => ({ n: request.query.n, type: typeof request.query.n }))
  a.post('/count', { schema: { body: count() } }, async (request) => ({ n: request.body.n }))
  // two response schemas of one shape but for the properties they write
  const withSecret = { id: 'a', name: 'shown', secret: 'never written' }
  a.get('/name', { schema: { response: { 200: Type.Object({ id: Type.String(), name: Type.String() }) } } }, async () => withSecret)
  a.get('/id', { schema: { response: { 200: Type.Object({ id: Type.String() }) } } }, async () => withSecret)
  return a
}

async function call(i: number, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base[i]}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

describe('route schema compilers: kept per schema content, each route answered by its own schema', () => {
  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const a = app()
      await a.listen({ port: 0, host: '127.0.0.1' })
      apps.push(a)
      base.push(`http://127.0.0.1:${(a.server.address() as AddressInfo).port}`)
    }
  })
  afterAll(async () => {
    for (const a of apps) await a.close()
  })

  it.each([0, 1])('app %i: equal shapes with different limits keep their own limits', async (i) => {
    expect((await call(i, 'POST', '/short', { name: 'abc' })).status).toBe(200)
    expect(await call(i, 'POST', '/short', { name: 'abcd' })).toEqual({ status: 400, body: { ok: false, error: 'invalid payload' } })
    expect(await call(i, 'POST', '/long', { name: 'abcd' })).toEqual({ status: 200, body: { got: 'abcd' } })
    expect((await call(i, 'POST', '/long', { name: 'abcdef' })).status).toBe(400)
  })

  it.each([0, 1])('app %i: a querystring is coerced, a body of the same schema is not', async (i) => {
    expect(await call(i, 'GET', '/count?n=5')).toEqual({ status: 200, body: { n: 5, type: 'number' } })
    expect(await call(i, 'POST', '/count', { n: 5 })).toEqual({ status: 200, body: { n: 5 } })
    expect((await call(i, 'POST', '/count', { n: '5' })).status).toBe(400)
  })

  it.each([0, 1])('app %i: each response writes the properties of its own schema only', async (i) => {
    expect(await call(i, 'GET', '/name')).toEqual({ status: 200, body: { id: 'a', name: 'shown' } })
    expect(await call(i, 'GET', '/id')).toEqual({ status: 200, body: { id: 'a' } })
  })

  it('a schema of equal content compiles once: the second compiler hands back the same function', () => {
    const route = { method: 'POST', url: '/x' }
    const first = createValidatorCompiler()({ ...route, schema: long(), httpPart: 'body' })
    expect(createValidatorCompiler()({ ...route, schema: long(), httpPart: 'body' })).toBe(first)
    expect(createValidatorCompiler()({ ...route, schema: long(), httpPart: 'querystring' })).not.toBe(first)
    expect(createValidatorCompiler()({ ...route, schema: short(), httpPart: 'body' })).not.toBe(first)
    const serialize = createSerializerCompiler()({ ...route, schema: long(), httpStatus: '200' })
    expect(createSerializerCompiler()({ ...route, url: '/y', schema: long(), httpStatus: '201' })).toBe(serialize)
    expect(serialize({ name: 'abc', other: 1 })).toBe('{"name":"abc"}')
  })
})
