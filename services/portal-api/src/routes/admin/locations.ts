import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { errorResponsesWithIssues } from '@lsv/shared/contract/errors.ts'
import { SECURITY } from '@lsv/shared/contract/security.ts'
import { NoContent } from '@lsv/shared/contract/common.ts'
import { AddLocationBody, ConnectionParams, CreatedLocation, LocationParams, RotateBody, RotatedLocationToken } from '@lsv/shared/contract/admin.ts'
import { addLocation, removeLocation, rotateLocationToken } from '@lsv/shared/domain/tenants/locations.ts'

/** Locations of the `partnercrm` connection, each with its own token. */
export function registerLocationRoutes(app: App, deps: PlatformDeps): void {
  const locations = '/api/v1/admin/accounts/:accountId/connections/:connectionId/locations'

  app.post(
    locations,
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'addLocation',
        tags: ['management'],
        summary: 'Connect a partner CRM location (its token is shown once)',
        security: SECURITY.operator,
        params: ConnectionParams,
        body: AddLocationBody,
        response: { 201: CreatedLocation, ...errorResponsesWithIssues(400, 401, 404, 409) },
      },
    },
    async (request, reply) => {
      const { accountId, connectionId } = request.params
      const { location_id } = request.body
      return reply.code(201).send(await addLocation(deps, accountId, connectionId, location_id))
    },
  )

  app.delete(
    `${locations}/:locationId`,
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'removeLocation',
        tags: ['management'],
        summary: 'Disconnect a partner CRM location (it is no longer active)',
        security: SECURITY.operator,
        params: LocationParams,
        response: { 204: NoContent('removed'), ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { accountId, connectionId, locationId } = request.params
      await removeLocation(deps, accountId, connectionId, locationId)
      return reply.code(204).send()
    },
  )
  app.post(
    `${locations}/:locationId/token/rotate`,
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'rotateLocationToken',
        tags: ['management'],
        summary: "Replace a location's token; the old one keeps working for the grace period",
        security: SECURITY.operator,
        params: LocationParams,
        body: RotateBody,
        response: { 201: RotatedLocationToken, ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { accountId, connectionId, locationId } = request.params
      const { grace_seconds } = request.body
      return reply.code(201).send(await rotateLocationToken(deps, accountId, connectionId, locationId, grace_seconds))
    },
  )
}
