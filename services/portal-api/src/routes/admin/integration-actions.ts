import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { errorResponses, errorResponsesWithIssues } from '@lsv/shared/contract/errors.ts'
import { SECURITY } from '@lsv/shared/contract/security.ts'
import { IntegrationParams } from '@lsv/shared/contract/admin.ts'
import { RotateSecretBody, RotatedSecret, TestEventSent } from '@lsv/shared/contract/integration-actions.ts'
import { rotateSigningSecret } from '@lsv/shared/domain/webhooks/secret-rotation.ts'
import { sendTestEvent } from '@lsv/shared/domain/webhooks/test-event.ts'
import { consumeWebhookActionQuota } from '@lsv/shared/domain/webhooks/rate-limit.ts'

/** Signing secret rotation and the test event of an integration (docs/management-api.md). */
export function registerIntegrationActionRoutes(app: App, deps: PlatformDeps): void {
  const path = '/api/v1/admin/accounts/:accountId/integrations/:integrationId'

  app.post(
    `${path}/secret/rotate`,
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'rotateIntegrationSecret',
        tags: ['management'],
        summary: 'Rotate the signing secret; the previous one keeps signing during the grace (the new secret is shown once)',
        security: SECURITY.operator,
        params: IntegrationParams,
        body: RotateSecretBody,
        response: { 201: RotatedSecret, ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { accountId, integrationId } = request.params
      return reply.code(201).send(await rotateSigningSecret(deps, accountId, integrationId, request.body.grace_seconds))
    },
  )

  app.post(
    `${path}/test-event`,
    {
      schema: {
        operationId: 'sendIntegrationTestEvent',
        tags: ['management'],
        summary: 'Send a test visitor.identified event (made-up person, id `evt_test_…`, classification `test`) through the normal signed delivery path',
        security: SECURITY.operator,
        params: IntegrationParams,
        response: { 202: TestEventSent, ...errorResponses(401, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const { accountId, integrationId } = request.params
      // 10 a minute per account (docs/webhooks.md, "Limits on actions that send traffic")
      await consumeWebhookActionQuota(deps, 'test_event', accountId)
      const delivery = await sendTestEvent(deps, accountId, integrationId)
      return reply.code(202).send({ ok: true, delivery_id: delivery.id, event_id: delivery.event_id, status: delivery.status })
    },
  )
}
