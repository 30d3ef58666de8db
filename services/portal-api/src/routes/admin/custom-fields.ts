import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { errorResponsesWithIssues } from '@lsv/shared/contract/errors.ts'
import { SECURITY } from '@lsv/shared/contract/security.ts'
import { AccountParams, CreateCustomFieldBody, CustomField, CustomFieldList } from '@lsv/shared/contract/admin.ts'
import { createCustomField, listCustomFields } from '@lsv/shared/domain/tenants/custom-fields.ts'

/** Custom field definitions (tier 1) of an account. */
export function registerCustomFieldRoutes(app: App, deps: PlatformDeps): void {
  const path = '/api/v1/admin/accounts/:accountId/custom-fields'

  app.post(
    path,
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'createCustomField',
        tags: ['management'],
        summary: 'Define a custom field',
        security: SECURITY.operator,
        params: AccountParams,
        body: CreateCustomFieldBody,
        response: { 201: CustomField, ...errorResponsesWithIssues(400, 401, 404, 409) },
      },
    },
    async (request, reply) => {
      const { accountId } = request.params
      return reply.code(201).send(await createCustomField(deps, accountId, request.body))
    },
  )

  app.get(
    path,
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'listCustomFields',
        tags: ['management'],
        summary: 'List the custom field definitions',
        security: SECURITY.operator,
        params: AccountParams,
        response: { 200: CustomFieldList, ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request) => {
      const { accountId } = request.params
      return listCustomFields(deps, accountId)
    },
  )
}
