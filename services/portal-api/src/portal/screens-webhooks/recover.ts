import { Type } from 'typebox'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { AppError, isAppError } from '@lsv/shared/errors/app-error.ts'
import { getIntegration } from '@lsv/shared/domain/tenants/integrations.ts'
import { planRecover, planRetryWaiting, recoverFailedDeliveries, retryWaitingDeliveries, statusCountsSince } from '@lsv/shared/domain/webhooks/recover.ts'
import { redirectTo, sendPage } from '../kit/page.ts'
import { sessionOf } from '../session.ts'
import { fieldValue, formOf } from '../kit/forms.ts'
import { instantOf, TimeInput } from './delivery-filters.ts'
import { recoverConfirmBody, recoverResultBody, retryWaitingConfirmBody } from './recover-views.ts'
import { WEBHOOKS_PATH, webhookPath } from './paths.ts'
import { IntegrationParams } from './schemas.ts'
import { auditOf } from '../kit/audited.ts'

const SinceQuery = Type.Object({ since: TimeInput })
const Count = Type.String({ maxLength: 5, pattern: '^\\d{1,5}$' })
const ResultQuery = Type.Object({ since: TimeInput, found: Count, replayed: Count, retry_after: Type.Optional(Count) })

/** A since time, required: '' is refused like a malformed one. */
function sinceOf(value: string): string {
  const since = instantOf(value)
  if (!since) throw new AppError('invalid_payload', { issues: [{ path: '/since', code: 'required', message: 'give the time to recover from' }] })
  return since
}

/**
 * Recover (Svix's name): replay every failed delivery of one webhook since a time. A GET shows
 * what would be sent (the confirmation step: it sends traffic to the tenant's endpoint), the POST
 * replays (domain/webhooks/recover.ts: bounded, in the replay limit) and writes the audit entry,
 * and answers 303 to the result page, which shows the live progress of those deliveries. The
 * result's numbers travel in its URL as numbers only, never words.
 */
export function registerRecoverScreens(scope: App, deps: PlatformDeps): void {
  const path = `${WEBHOOKS_PATH}/:integrationId/recover`

  scope.get(path, { schema: { hide: true, params: IntegrationParams, querystring: SinceQuery } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    const integration = await getIntegration(deps, account.id, integrationId)
    const since = sinceOf(request.query.since)
    const plan = await planRecover(deps, account.id, integrationId, since)
    const waiting = integration.active ? (await planRetryWaiting(deps, account.id, integrationId)).failed.length : 0
    return sendPage(reply, {
      status: 200,
      account,
      current: WEBHOOKS_PATH,
      flash: null,
      error: integration.active ? null : 'This webhook is disabled: re-enable it before recovering.',
      title: 'Recover failed deliveries',
      body: recoverConfirmBody({ integration, since, failed: integration.active ? plan.failed.length : 0, complete: plan.complete, waiting }),
    })
  })

  scope.post(path, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const session = sessionOf(request)
    const { integrationId } = request.params
    const since = sinceOf(fieldValue(formOf(request.body), 'since'))
    let result
    try {
      result = await recoverFailedDeliveries(deps, session.account.id, integrationId, since)
    } catch (err) {
      if (isAppError(err) && err.status === 409) {
        const integration = await getIntegration(deps, session.account.id, integrationId)
        return sendPage(reply, {
          status: 409,
          account: session.account,
          current: WEBHOOKS_PATH,
          flash: null,
          error: 'This webhook is disabled: re-enable it before recovering.',
          title: 'Recover failed deliveries',
          body: recoverConfirmBody({ integration, since, failed: 0, complete: true, waiting: 0 }),
        })
      }
      throw err
    }
    await auditOf(deps, request).record({
      action: 'delivery.recovered',
      target: { integration_id: integrationId },
      details: { since, found: result.found, replayed: result.replayed },
    })
    const q = new URLSearchParams({ since, found: String(result.found), replayed: String(result.replayed) })
    if (result.retryAfter !== null) q.set('retry_after', String(result.retryAfter))
    return redirectTo(reply, `${webhookPath(integrationId)}/recover/result?${q}`)
  })

  scope.get(`${path}/result`, { schema: { hide: true, params: IntegrationParams, querystring: ResultQuery } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    const integration = await getIntegration(deps, account.id, integrationId)
    const q = request.query
    const since = sinceOf(q.since)
    const counts = await statusCountsSince(deps, account.id, integrationId, since)
    const outcome = {
      since,
      found: Number(q.found),
      replayed: Math.min(Number(q.replayed), Number(q.found)),
      retryAfter: q.retry_after ? Number(q.retry_after) : null,
    }
    return sendPage(reply, {
      status: 200,
      account,
      current: WEBHOOKS_PATH,
      flash: null,
      error: null,
      title: 'Recover: result',
      body: recoverResultBody({ integration, outcome, counts }),
    })
  })

  registerRetryWaiting(scope, deps)
}

/**
 * "Retry everything waiting" (issue 29, D5): after the receiver was fixed, the deliveries still
 * waiting for a retry are sent now (domain/webhooks/recover.ts, retryWaitingDeliveries). A GET
 * asks, the POST sends, audits and answers 303 to the webhook with a flash saying how many went
 * (and how many the replay limit held back).
 */
function registerRetryWaiting(scope: App, deps: PlatformDeps): void {
  const path = `${WEBHOOKS_PATH}/:integrationId/retry-waiting`
  const disabled = 'This webhook is disabled: re-enable it before retrying.'

  scope.get(path, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    const integration = await getIntegration(deps, account.id, integrationId)
    const plan = await planRetryWaiting(deps, account.id, integrationId)
    return sendPage(reply, {
      status: 200,
      account,
      current: WEBHOOKS_PATH,
      flash: null,
      error: integration.active ? null : disabled,
      title: 'Retry everything waiting',
      body: retryWaitingConfirmBody({ integration, waiting: integration.active ? plan.failed.length : 0, complete: plan.complete }),
    })
  })

  scope.post(path, { schema: { hide: true, params: IntegrationParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integrationId } = request.params
    let result
    try {
      result = await retryWaitingDeliveries(deps, account.id, integrationId)
    } catch (err) {
      if (isAppError(err) && err.status === 409) {
        const integration = await getIntegration(deps, account.id, integrationId)
        return sendPage(reply, {
          status: 409,
          account,
          current: WEBHOOKS_PATH,
          flash: null,
          error: disabled,
          title: 'Retry everything waiting',
          body: retryWaitingConfirmBody({ integration, waiting: 0, complete: true }),
        })
      }
      throw err
    }
    await auditOf(deps, request).record({
      action: 'delivery.retried_waiting',
      target: { integration_id: integrationId },
      details: { found: result.found, replayed: result.replayed },
    })
    return redirectTo(reply, webhookPath(integrationId), result.replayed < result.found ? 'waiting-partly-retried' : 'waiting-retried')
  })
}
