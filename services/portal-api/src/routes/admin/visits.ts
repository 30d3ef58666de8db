import { Type } from 'typebox'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { errorResponsesWithIssues } from '@lsv/shared/contract/errors.ts'
import { AccountParams } from '@lsv/shared/contract/admin.ts'
import { VisitEventInput } from '@lsv/shared/contract/visit-event.ts'
import { authenticateOperator } from '@lsv/shared/domain/auth/authenticate-api-key.ts'
import { AppError } from '@lsv/shared/errors/app-error.ts'
import { InvalidVisitEvent, validateVisitEvent } from '@lsv/shared/domain/visits/parse.ts'
import { publishVisitEvent } from '@lsv/shared/domain/visits/publish.ts'
import { futureEventTimeIssues } from '@lsv/shared/domain/visits/event-time.ts'
import { isLinkTokenShape } from '@lsv/shared/domain/links/resolve.ts'
import { StageDeadline } from '@lsv/shared/http/dependency-deadline.ts'

/**
 * `POST /api/v1/admin/accounts/{accountId}/visits`: injects a visit event on the visit-events
 * topic, the same message the identification pipeline publishes (management-api.md). 202 once
 * the message is durable; the dispatcher does the rest asynchronously. An event time more than
 * five minutes past the clock is a 400 (domain/visits/event-time.ts). The account lookup is one
 * dependency stage, as an edge push's checks are (EDGE_DEPENDENCY_DEADLINE_MS: 503 with Retry-After
 * once it passes). The publish is not raced with the deadline, as the edge's is not (issue 31: a 503
 * must mean "not published"): a publish cannot be withdrawn once started, and one cut by the
 * deadline used to land after its 503 and be delivered. The answer waits for the publish's own
 * result: 202 when the queue holds the visit, 503 with Retry-After when it refused it, bounded by
 * the queue client's own timeout (15 s for a Pub/Sub publish; dependency-deadline.ts).
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
        params: AccountParams,
        body: VisitEventInput,
        response: {
          202: Type.Object({ ok: Type.Literal(true), id: Type.String() }, { additionalProperties: false }),
          ...errorResponsesWithIssues(400, 401, 404, 409, 503),
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
      // what the dispatcher could only skip (a log line, after this 202) is refused here, where the
      // caller hears it: an `lsv` that is no link token at all, a visit of an inactive account
      if (event.lsv !== undefined && !isLinkTokenShape(event.lsv)) {
        throw new AppError('invalid_payload', { issues: [{ code: 'format', message: 'is not a link token (a.… or s.…)', path: '/lsv' }] })
      }
      const deadlineMs = deps.config.edgeDependencyDeadlineMs
      const account = await new StageDeadline(deadlineMs).within(deps.tenants.getAccount(accountId))
      if (!account) throw new AppError('not_found')
      if (!account.active) throw new AppError('conflict')
      try {
        await publishVisitEvent(deps, event)
      } catch (cause) {
        // the queue refused it (or its client gave up): nothing was published, retrying is safe
        throw new AppError('temporarily_unavailable', { cause, headers: { 'retry-after': String(Math.max(1, Math.ceil(deadlineMs / 1000))) } })
      }
      return reply.code(202).send({ ok: true, id: event.id })
    },
  )
}
