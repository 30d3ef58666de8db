import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pino from 'pino'
import { Type } from 'typebox'
import { buildBaseApp, type App } from '@lsv/shared/http/base-app.ts'
import { NoContent } from '@lsv/shared/contract/common.ts'
import { errorResponsesWithIssues } from '@lsv/shared/contract/errors.ts'
import { SECURITY } from '@lsv/shared/contract/security.ts'
import { AccountParams, RevokeKeyQuery, RotateBody } from '@lsv/shared/contract/admin.ts'

/**
 * Route schemas carry the OpenAPI keys and still type-check as fastify schemas, and the TypeBox
 * type provider types a handler's params, body, querystring and replies from them. The
 * `@ts-expect-error` lines are the test's other half: `npm run typecheck` fails when one of them
 * stops being an error (say, failure responses typed so loosely that any reply passes, or a 204
 * that takes a body). At run time: the declared answers, a 204 without a body.
 */

const Created = Type.Object({ id: Type.String(), grace: Type.Integer() }, { additionalProperties: false })

function register(app: App): void {
  app.post(
    '/typed/:accountId',
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'typedProbe',
        tags: ['probe'],
        summary: 'typed probe',
        security: SECURITY.operator,
        params: AccountParams,
        querystring: RevokeKeyQuery,
        body: RotateBody,
        response: { 201: Created, 204: NoContent('nothing'), ...errorResponsesWithIssues(400) },
      },
    },
    async (request, reply) => {
      const accountId: string = request.params.accountId
      // @ts-expect-error a path parameter is a string
      const asNumber: number = request.params.accountId
      const grace: number | undefined = request.body.grace_seconds
      // @ts-expect-error not a member of the body schema
      void request.body.other
      // @ts-expect-error not a member of the querystring schema
      void request.query.other
      void asNumber
      if (request.query.grace_seconds === 7) return reply.code(204).send()
      if (grace === 1) {
        // @ts-expect-error a 204 has no body
        return reply.code(204).send({ ok: true })
      }
      if (grace === 2) {
        // @ts-expect-error not the 201 the schema declares
        return reply.code(201).send({ id: accountId })
      }
      return reply.code(201).send({ id: accountId, grace: grace ?? -1 })
    },
  )

  app.get(
    '/typed-reply',
    {
      schema: { hide: true, response: { 200: Created, ...errorResponsesWithIssues(400) } },
    },
    // @ts-expect-error the handler returns what no declared response says
    async () => ({ nope: true }),
  )
}

describe('typed routes', () => {
  let app: App
  beforeAll(async () => {
    app = buildBaseApp({ logger: pino({ level: 'silent' }) })
    register(app)
    await app.ready()
  })
  afterAll(async () => {
    await app?.close()
  })

  it('answers what the schema declares', async () => {
    // an account id is a uuid (AccountParams)
    const acct = '3f1c2b8e-5d4a-4c6b-9e7f-0a1b2c3d4e5f'
    const created = await app.inject({ method: 'POST', url: `/typed/${acct}`, payload: { grace_seconds: 5 } })
    expect(created.statusCode).toBe(201)
    expect(created.json()).toEqual({ id: acct, grace: 5 })
    const none = await app.inject({ method: 'POST', url: `/typed/${acct}?grace_seconds=7`, payload: {} })
    expect(none.statusCode).toBe(204)
    expect(none.body).toBe('')
    const invalid = await app.inject({ method: 'POST', url: `/typed/${acct}`, payload: { grace_seconds: 'soon' } })
    expect(invalid.statusCode).toBe(400)
    expect(invalid.json()).toMatchObject({ ok: false, error: 'invalid payload', issues: [{ path: '/grace_seconds' }] })
  })
})
