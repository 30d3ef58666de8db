import { Type } from 'typebox'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { errorResponses } from '@lsv/shared/contract/errors.ts'
import { createDeliveryTaskHandler } from '@lsv/shared/domain/webhooks/deliver.ts'
import { checkInternalCaller, taskCallers } from '@lsv/shared/http/internal-callers.ts'
import type { DeliverySweeper } from '@lsv/shared/domain/webhooks/sweep.ts'

/**
 * `POST /tasks/deliver`: Cloud Tasks calls it once per attempt with the task payload as the
 * body (production). 200 tells Cloud Tasks the task is done, whatever the receiver answered:
 * our own schedule owns retries. A 5xx (store unavailable) makes Cloud Tasks retry the task.
 * Only Cloud Tasks may call it: an OIDC token with audience DISPATCHER_URL and the email
 * TASKS_SERVICE_ACCOUNT (the oidcToken every task carries), or loopback callers in local
 * development. Cloud Run IAM (run.invoker) guards the service as a whole and admits Pub/Sub's
 * identity too; this check keeps each route to its own caller.
 *
 * The body is the payload's bytes, read by the handler as the embedded scheduler hands them to
 * it (a DeliveryJob, contract/messages.ts): bytes that are not a job, JSON or not, are dropped
 * with 200 `invalid` (logged), never a 400 that Cloud Tasks would only retry.
 *
 * After the attempt, the stranded-delivery sweep runs when it is due (domain/webhooks/sweep.ts:
 * at most every 5 min per instance, never failing the task).
 */
export function registerTaskRoutes(app: App, deps: PlatformDeps, sweeper: DeliverySweeper): void {
  const handler = createDeliveryTaskHandler(deps)
  const callers = taskCallers(deps.config)
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body))
    scope.post(
      '/tasks/deliver',
      {
        schema: {
          operationId: 'runDeliveryTask',
          tags: ['internal'],
          summary: 'Run one webhook delivery attempt (Cloud Tasks target)',
          hide: true,
          response: { 200: Type.Object({ ok: Type.Literal(true), outcome: Type.String() }), ...errorResponses(401, 500) },
        },
        onRequest: async (request) => checkInternalCaller(request, callers),
      },
      async (request) => {
        // the queue the task was created on (the scheduler's own header; only Cloud Tasks gets this far)
        const queue = request.headers['x-delivery-queue']
        const outcome = await handler(Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0), typeof queue === 'string' ? { queue } : undefined)
        await sweeper.maybeRun()
        return { ok: true as const, outcome }
      },
    )
  })
}
