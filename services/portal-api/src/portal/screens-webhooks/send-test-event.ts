import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { isAppError } from '@lsv/shared/errors/app-error.ts'
import { sendTestEvent } from '@lsv/shared/domain/webhooks/test-event.ts'
import { consumeWebhookActionQuota } from '@lsv/shared/domain/webhooks/rate-limit.ts'
import { sessionOf } from '../session.ts'
import { redirectToLog, sendDetail } from './endpoint-page.ts'
import { recordIntegrationAction } from './integration-audit.ts'
import { limitRefusal } from './refusals.ts'
import { IntegrationParams } from './schemas.ts'
import { WEBHOOKS_PATH } from './paths.ts'

/**
 * "Send test event" (`POST …/test`): a test delivery through the normal signed path, in the
 * account's test-event limit, audited; the answer leads to the delivery log with the new delivery
 * marked (issue 29, D9). An inactive or version 1 webhook takes none (409, said on the page).
 */
export function registerTestEvent(scope: App, deps: PlatformDeps): void {
  scope.post(`${WEBHOOKS_PATH}/:integrationId/test`, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    let delivery
    try {
      await consumeWebhookActionQuota(deps, 'test_event', account.id)
      delivery = await sendTestEvent(deps, account.id, integrationId)
    } catch (err) {
      const limited = limitRefusal(err, 'test_event')
      if (limited) return sendDetail(deps, request, reply.header('retry-after', limited.retryAfter), integrationId, 429, { error: limited.text })
      if (isAppError(err) && err.status === 409)
        return sendDetail(deps, request, reply, integrationId, 409, { error: 'Only an active version 2 webhook receives test events.' })
      throw err
    }
    await recordIntegrationAction(deps, request, 'integration.test_event_sent', integrationId, { delivery_id: delivery.id, event_id: delivery.event_id })
    return redirectToLog(reply, integrationId, 'test-sent', delivery.id)
  })
}
