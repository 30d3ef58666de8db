import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { errorResponsesWithIssues } from '@lsv/shared/contract/errors.ts'
import { SECURITY } from '@lsv/shared/contract/security.ts'
import { NoContent } from '@lsv/shared/contract/common.ts'
import { withAuditedChange } from '@lsv/shared/domain/audit/audited-change.ts'
import type { IntegrationRecord } from '@lsv/shared/model/records.ts'
import {
  AccountParams,
  CreateIntegrationBody,
  CreatedIntegration,
  Integration,
  IntegrationList,
  IntegrationParams,
  UpdateIntegrationBody,
} from '@lsv/shared/contract/admin.ts'
import { consumeWebhookActionQuota } from '@lsv/shared/domain/webhooks/rate-limit.ts'
import { createIntegration, deleteIntegration, getIntegration, listIntegrations, updateIntegration } from '@lsv/shared/domain/tenants/integrations.ts'

/** Outbound `visitor.identified` integrations (the delivery log is in `./deliveries.ts`). */
export function registerIntegrationRoutes(app: App, deps: PlatformDeps): void {
  const path = '/api/v1/admin/accounts/:accountId/integrations'

  app.post(
    path,
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'createIntegration',
        tags: ['management'],
        summary: 'Create an outbound integration (the signing secret is shown once)',
        security: SECURITY.operator,
        params: AccountParams,
        body: CreateIntegrationBody,
        response: { 201: CreatedIntegration, ...errorResponsesWithIssues(400, 401, 404, 429) },
      },
    },
    async (request, reply) => {
      const { accountId } = request.params
      // 20 an hour per account (docs/webhooks.md, "Limits on actions that send traffic")
      await consumeWebhookActionQuota(deps, 'integration_create', accountId)
      return reply.code(201).send(await createIntegration(deps, accountId, request.body))
    },
  )

  app.get(
    path,
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'listIntegrations',
        tags: ['management'],
        summary: 'List the integrations of an account',
        security: SECURITY.operator,
        params: AccountParams,
        response: { 200: IntegrationList, ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request) => {
      const { accountId } = request.params
      return listIntegrations(deps, accountId)
    },
  )

  app.get(
    `${path}/:integrationId`,
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'getIntegration',
        tags: ['management'],
        summary: 'Read an integration (never its signing secret)',
        security: SECURITY.operator,
        params: IntegrationParams,
        response: { 200: Integration, ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request) => {
      const { accountId, integrationId } = request.params
      return getIntegration(deps, accountId, integrationId)
    },
  )

  app.patch(
    `${path}/:integrationId`,
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'updateIntegration',
        tags: ['management'],
        summary: 'Change an integration (url, payload version, tiers, active, name, description)',
        security: SECURITY.operator,
        params: IntegrationParams,
        body: UpdateIntegrationBody,
        response: { 200: Integration, ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request) => {
      const { accountId, integrationId } = request.params
      return updateIntegration(deps, accountId, integrationId, request.body)
    },
  )

  app.delete(
    `${path}/:integrationId`,
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'deleteIntegration',
        tags: ['management'],
        summary: 'Delete an integration: nothing more is delivered to it (queued deliveries end as failed)',
        security: SECURITY.operator,
        params: IntegrationParams,
        response: { 204: NoContent('deleted'), ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { accountId, integrationId } = request.params
      // the account's audit log shows the deletion, committed with it (actor: the operator's API)
      const audited = withAuditedChange(deps, (deleted: IntegrationRecord) => ({
        account_id: accountId,
        actor: 'operator',
        action: 'integration.deleted',
        target: { integration_id: deleted.id },
        details: { host: new URL(deleted.url).host },
      }))
      await deleteIntegration(audited, accountId, integrationId)
      return reply.code(204).send()
    },
  )
}
