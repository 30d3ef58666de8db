import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { errorResponsesWithIssues } from '@lsv/shared/contract/errors.ts'
import { SECURITY } from '@lsv/shared/contract/security.ts'
import {
  AccountParams,
  Connection,
  ConnectionList,
  ConnectionParams,
  CreateConnectionBody,
  CreatedConnection,
  UpdateConnectionBody,
} from '@lsv/shared/contract/admin.ts'
import { createConnection, getConnection, listConnections, updateConnection } from '@lsv/shared/domain/tenants/connections.ts'

/** Inbound connections of an account (`api`, `webhook`, `partnercrm`). */
export function registerConnectionRoutes(app: App, deps: PlatformDeps): void {
  app.post(
    '/api/v1/admin/accounts/:accountId/connections',
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'createConnection',
        tags: ['management'],
        summary: "Create an inbound connection (a webhook connection's token is shown once)",
        security: SECURITY.operator,
        params: AccountParams,
        body: CreateConnectionBody,
        response: { 201: CreatedConnection, ...errorResponsesWithIssues(400, 401, 404, 409) },
      },
    },
    async (request, reply) => {
      const { accountId } = request.params
      return reply.code(201).send(await createConnection(deps, accountId, request.body))
    },
  )

  app.get(
    '/api/v1/admin/accounts/:accountId/connections',
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'listConnections',
        tags: ['management'],
        summary: 'List the connections of an account',
        security: SECURITY.operator,
        params: AccountParams,
        response: { 200: ConnectionList, ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request) => {
      const { accountId } = request.params
      return listConnections(deps, accountId)
    },
  )

  app.get(
    '/api/v1/admin/accounts/:accountId/connections/:connectionId',
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'getConnection',
        tags: ['management'],
        summary: 'Read a connection',
        security: SECURITY.operator,
        params: ConnectionParams,
        response: { 200: Connection, ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request) => {
      const { accountId, connectionId } = request.params
      return getConnection(deps, accountId, connectionId)
    },
  )

  app.patch(
    '/api/v1/admin/accounts/:accountId/connections/:connectionId',
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'updateConnection',
        tags: ['management'],
        summary: "Change a connection (active, field mappings, name; a partner CRM connection's token cutover)",
        security: SECURITY.operator,
        params: ConnectionParams,
        body: UpdateConnectionBody,
        response: { 200: Connection, ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request) => {
      const { accountId, connectionId } = request.params
      return updateConnection(deps, accountId, connectionId, request.body)
    },
  )
}
