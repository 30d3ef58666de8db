import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { errorResponsesWithIssues } from '@lsv/shared/contract/errors.ts'
import { SECURITY } from '@lsv/shared/contract/security.ts'
import { NoContent } from '@lsv/shared/contract/common.ts'
import {
  ApiKey,
  ConnectionParams,
  CreateKeyBody,
  CreatedApiKey,
  KeyParams,
  RevokeKeyQuery,
  RotateBody,
  RotatedApiKey,
  RotatedToken,
} from '@lsv/shared/contract/admin.ts'
import { getApiKey, issueApiKey, revokeApiKey, rotateApiKey } from '@lsv/shared/domain/tenants/manage-api-keys.ts'
import { rotateSourceToken } from '@lsv/shared/domain/tenants/rotate-source-token.ts'

/** API keys of `api` connections and the source token of `webhook` connections. */
export function registerKeyRoutes(app: App, deps: PlatformDeps): void {
  const keys = '/api/v1/admin/accounts/:accountId/connections/:connectionId/keys'

  app.post(
    keys,
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'createApiKey',
        tags: ['management'],
        summary: 'Issue an API key on an api connection (the key is shown once)',
        security: SECURITY.operator,
        params: ConnectionParams,
        body: CreateKeyBody,
        response: { 201: CreatedApiKey, ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { accountId, connectionId } = request.params
      return reply.code(201).send(await issueApiKey(deps, accountId, connectionId, request.body))
    },
  )

  app.get(
    `${keys}/:keyId`,
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'getApiKey',
        tags: ['management'],
        summary: "Read an API key's metadata (never the key)",
        security: SECURITY.operator,
        params: KeyParams,
        response: { 200: ApiKey, ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request) => {
      const { accountId, connectionId, keyId } = request.params
      return getApiKey(deps, accountId, connectionId, keyId)
    },
  )

  app.post(
    `${keys}/:keyId/rotate`,
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'rotateApiKey',
        tags: ['management'],
        summary: 'Replace an API key; the old one keeps working for the grace period',
        security: SECURITY.operator,
        params: KeyParams,
        body: RotateBody,
        response: { 201: RotatedApiKey, ...errorResponsesWithIssues(400, 401, 404, 409) },
      },
    },
    async (request, reply) => {
      const { accountId, connectionId, keyId } = request.params
      const { grace_seconds } = request.body
      return reply.code(201).send(await rotateApiKey(deps, accountId, connectionId, keyId, grace_seconds))
    },
  )

  app.delete(
    `${keys}/:keyId`,
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'revokeApiKey',
        tags: ['management'],
        summary: 'Revoke an API key, at once or after `grace_seconds`',
        security: SECURITY.operator,
        params: KeyParams,
        querystring: RevokeKeyQuery,
        response: { 204: NoContent('revoked'), ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { accountId, connectionId, keyId } = request.params
      const { grace_seconds } = request.query
      await revokeApiKey(deps, accountId, connectionId, keyId, grace_seconds ?? 0)
      return reply.code(204).send()
    },
  )

  app.post(
    '/api/v1/admin/accounts/:accountId/connections/:connectionId/token/rotate',
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'rotateSourceToken',
        tags: ['management'],
        summary: "Replace a webhook connection's source token; the old one keeps working for the grace period",
        security: SECURITY.operator,
        params: ConnectionParams,
        body: RotateBody,
        response: { 201: RotatedToken, ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { accountId, connectionId } = request.params
      const { grace_seconds } = request.body
      return reply.code(201).send(await rotateSourceToken(deps, accountId, connectionId, grace_seconds))
    },
  )
}
