import { AppError, isAppError } from '../../errors/app-error.ts'
import type { PayloadProblem } from '../../ports/push-log.ts'

/**
 * A push body refused as 400 `invalid payload`, with the field it was about (issue 29, D12). The
 * answer stays the contract's envelope (4.3: `{ok, error}`, no `issues`); the field travels as the
 * error's cause, which the error handler logs ("request rejected") and the edge's push state keeps
 * for the inbound debugger (services/edge-ingest/src/routes/push-state.ts).
 */
export function invalidPayload(path: string, reason: string): AppError {
  const problem: PayloadProblem = { path, reason }
  return new AppError('invalid_payload', { cause: problem })
}

/** The field of an `invalid payload` refusal made by invalidPayload, or null for any other error. */
export function payloadProblemOf(err: unknown): PayloadProblem | null {
  if (!isAppError(err) || err.code !== 'invalid_payload') return null
  const cause = err.cause as Partial<PayloadProblem> | undefined
  return typeof cause?.path === 'string' && typeof cause.reason === 'string' ? { path: cause.path, reason: cause.reason } : null
}
