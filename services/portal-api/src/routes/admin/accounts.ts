import { Type } from 'typebox'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { errorResponsesWithIssues } from '@lsv/shared/contract/errors.ts'
import { Uuid } from '@lsv/shared/contract/common.ts'
import { SECURITY } from '@lsv/shared/contract/security.ts'
import { Account, AccountList, AccountParams, CreateAccountBody, UpdateAccountBody } from '@lsv/shared/contract/admin.ts'
import { createAccount, getAccount, listAccounts, updateAccount } from '@lsv/shared/domain/tenants/accounts.ts'

/** Accounts (tenants). The operator check is attached to every admin route by `./index.ts`. */
export function registerAccountRoutes(app: App, deps: PlatformDeps): void {
  app.post(
    '/api/v1/admin/accounts',
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'createAccount',
        tags: ['management'],
        summary: 'Create an account (tenant)',
        security: SECURITY.operator,
        body: CreateAccountBody,
        response: { 201: Account, ...errorResponsesWithIssues(400, 401, 409) },
      },
    },
    async (request, reply) => {
      return reply.code(201).send(await createAccount(deps, request.body))
    },
  )

  app.get(
    '/api/v1/admin/accounts',
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'listAccounts',
        tags: ['management'],
        summary: 'List accounts, ordered by id',
        security: SECURITY.operator,
        querystring: Type.Object({
          after: Type.Optional(Uuid({ description: '`next_after` of the previous page' })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
        }),
        response: { 200: AccountList, ...errorResponsesWithIssues(400, 401) },
      },
    },
    async (request) => {
      const q = request.query
      return listAccounts(deps, { ...(q.after ? { after: q.after } : {}), limit: q.limit ?? 50 })
    },
  )

  app.get(
    '/api/v1/admin/accounts/:accountId',
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'getAccount',
        tags: ['management'],
        summary: 'Read an account',
        security: SECURITY.operator,
        params: AccountParams,
        response: { 200: Account, ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request) => {
      const { accountId } = request.params
      return getAccount(deps, accountId)
    },
  )

  app.patch(
    '/api/v1/admin/accounts/:accountId',
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'updateAccount',
        tags: ['management'],
        summary: 'Change an account (active, API access, permitted tiers, name)',
        security: SECURITY.operator,
        params: AccountParams,
        body: UpdateAccountBody,
        response: { 200: Account, ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request) => {
      const { accountId } = request.params
      return updateAccount(deps, accountId, request.body)
    },
  )
}
