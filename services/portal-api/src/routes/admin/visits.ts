import { Type } from 'typebox'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { errorResponsesWithIssues } from '@lsv/shared/contract/errors.ts'
import { VisitEventInput } from '@lsv/shared/contract/visit-event.ts'
import { authenticateOperator } from '@lsv/shared/domain/auth/authenticate-api-key.ts'
import { AppError } from '@lsv/shared/errors/app-error.ts'
import { InvalidVisitEvent, validateVisitEvent } from '@lsv/shared/domain/visits/parse.ts'
import { publishVisitEvent } from '@lsv/shared/domain/visits/publish.ts'
import { futureEventTimeIssues } from '@lsv/shared/domain/visits/event-time.ts'
import { StageDeadline } from '@lsv/shared/http/dependency-deadline.ts'

/**
 * `POST /api/v1/admin/accounts/{accountId}/visits`: injects a visit event on the visit-events
 * topic, the same message the identification pipeline publishes (management-api.md). 202 once
 * the message is durable; the dispatcher does the rest asynchronously. An event time more than
 * five minutes past the clock is a 400 (domain/visits/event-time.ts). The account lookup and the
 * publish share one dependency deadline, as an edge push's stages do (EDGE_DEPENDENCY_DEADLINE_MS):
 * with Pub/Sub down the answer is a 503 with Retry-After within it, not after the client
 * library's own 15 s (dependency-deadline.ts).
 */
export function registerVisitAdminRoutes(app: App, deps: PlatformDeps): void {
  app.post(
    '/api/v1/admin/accounts/:accountId/visits',
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'injectVisitEvent',
        tags: ['management'],
        summary: 'Inject a visit event (as the identification pipeline does)',
        security: [{ operatorToken: [] }],
        params: Type.Object({ accountId: Type.String({ minLength: 1, maxLength: 128 }) }),
        body: VisitEventInput,
        response: {
          202: Type.Object({ ok: Type.Literal(true), id: Type.String() }, { additionalProperties: false }),
          ...errorResponsesWithIssues(400, 401, 404, 503),
        },
      },
    },
    async (request, reply) => {
      await authenticateOperator(deps, request.headers.authorization)
      const { accountId } = request.params
      const input = request.body
      if (input.account_id !== undefined && input.account_id !== accountId) {
        throw new AppError('invalid_payload', { issues: [{ code: 'const', message: 'must equal the accountId of the path', path: '/account_id' }] })
      }
      let event
      try {
        event = validateVisitEvent({ ...input, account_id: accountId })
      } catch (err) {
        if (err instanceof InvalidVisitEvent) {
          throw new AppError('invalid_payload', { issues: err.issues.map((m) => ({ code: 'invalid', message: m, path: '/' })) })
        }
        throw err
      }
      // a time far past the clock would win every later merge: refused here, where the caller hears it
      const lateTimes = futureEventTimeIssues(event, deps.clock.now())
      if (lateTimes.length > 0) throw new AppError('invalid_payload', { issues: lateTimes })
      const stage = new StageDeadline(deps.config.edgeDependencyDeadlineMs)
      if (!(await stage.within(deps.tenants.getAccount(accountId)))) throw new AppError('not_found')
      try {
        await stage.within(publishVisitEvent(deps, event))
      } catch (cause) {
        // the deadline's own 503 carries Retry-After; a failed publish is a 503 as well
        if (cause instanceof AppError) throw cause
        throw new AppError('temporarily_unavailable', { cause })
      }
      return reply.code(202).send({ ok: true, id: event.id })
    },
  )
}
