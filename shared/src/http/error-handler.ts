import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError, isAppError } from '../errors/app-error.ts'
import type { ErrorCode } from '../errors/codes.ts'
import { issuesFromAjv } from './validation.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** which error a schema validation failure maps to (default `invalid_payload`) */
    validationErrorCode?: ErrorCode
    /** send `issues` with a validation failure (link minting and the management API do) */
    validationIssues?: boolean
  }
}

/** The contract's failure envelope. */
export function sendError(reply: FastifyReply, err: AppError): FastifyReply {
  for (const [name, value] of Object.entries(err.headers)) reply.header(name, value)
  const body: { ok: false; error: string; issues?: unknown[] } = { ok: false, error: err.message }
  if (err.issues) body.issues = err.issues
  return reply.code(err.status).type('application/json; charset=utf-8').send(JSON.stringify(body))
}

/** Maps whatever was thrown to an AppError; unknown failures become `internal` (never leaked). */
export function toAppError(error: unknown, request: FastifyRequest): AppError {
  if (isAppError(error)) return error
  const err = error as FastifyError | undefined
  if (err && Array.isArray(err.validation)) {
    const config = request.routeOptions?.config ?? {}
    const code = config.validationErrorCode ?? 'invalid_payload'
    return new AppError(code, config.validationIssues ? { issues: issuesFromAjv(err.validation) } : {})
  }
  switch (err?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large')
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('invalid_json')
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type')
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('invalid_json')
  }
  if (err instanceof SyntaxError) return new AppError('invalid_json', { cause: err })
  const status = typeof err?.statusCode === 'number' ? err.statusCode : 500
  if (status === 404) return new AppError('not_found', { cause: err })
  if (status === 413) return new AppError('payload_too_large', { cause: err })
  if (status >= 400 && status < 500) return new AppError('invalid_payload', { cause: err })
  return new AppError('internal', { cause: err })
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error, request)
    if (appError.status >= 500) {
      request.log.error({ err: appError.cause ?? error, code: appError.code }, 'request failed')
    } else if (appError.cause && appError.code !== 'invalid_json') {
      request.log.info({ err: appError.cause, code: appError.code }, 'request rejected')
    }
    return sendError(reply, appError)
  })
  app.setNotFoundHandler((_request, reply) => sendError(reply, new AppError('not_found')))
}
