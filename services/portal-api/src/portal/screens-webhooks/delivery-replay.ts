import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { isAppError } from '@lsv/shared/errors/app-error.ts'
import { replayDeliveryFor } from '@lsv/shared/domain/webhooks/delivery-log.ts'
import { consumeWebhookActionQuota } from '@lsv/shared/domain/webhooks/rate-limit.ts'
import { sessionOf } from '../session.ts'
import { redirectToLog, sendDetail } from './endpoint-page.ts'
import { recordIntegrationAction } from './integration-audit.ts'
import { limitRefusal } from './refusals.ts'
import { DeliveryParams } from './schemas.ts'
import { WEBHOOKS_PATH } from './paths.ts'

/**
 * Replay (`POST …/deliveries/{deliveryId}/replay`, from a log row or the debugger): a kept
 * delivery sent again as a new run of attempts, in the account's replay limit, audited; the
 * answer leads back to the delivery log. A disabled webhook replays nothing (409, said on the page).
 */
export function registerDeliveryReplay(scope: App, deps: PlatformDeps): void {
  scope.post(`${WEBHOOKS_PATH}/:integrationId/deliveries/:deliveryId/replay`, { schema: { hide: true, params: DeliveryParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId, deliveryId } = request.params
    try {
      await consumeWebhookActionQuota(deps, 'replay', account.id)
      await replayDeliveryFor(deps, account.id, integrationId, deliveryId)
    } catch (err) {
      const limited = limitRefusal(err, 'replay')
      if (limited) return sendDetail(deps, request, reply.header('retry-after', limited.retryAfter), integrationId, 429, { error: limited.text })
      if (isAppError(err) && err.status === 409)
        return sendDetail(deps, request, reply, integrationId, 409, { error: 'This webhook is disabled: re-enable it before replaying.' })
      throw err
    }
    await recordIntegrationAction(deps, request, 'delivery.replayed', integrationId, { delivery_id: deliveryId })
    return redirectToLog(reply, integrationId, 'delivery-replayed')
  })
}
