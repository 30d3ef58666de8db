import { Type, type Static, type TSchema } from 'typebox'

/** One validation issue (link minting and management API 400 `invalid payload`). */
export const ValidationIssue = Type.Object(
  {
    code: Type.String(),
    message: Type.String(),
    path: Type.String(),
  },
  { title: 'ValidationIssue', additionalProperties: true },
)

/** The failure envelope of every operation: `{ok: false, error}` (contract section 7). */
export const ErrorEnvelope = Type.Object(
  {
    ok: Type.Literal(false),
    error: Type.String(),
  },
  { title: 'ErrorEnvelope', additionalProperties: false },
)

/** Link minting and the management API add `issues` on a request-validation failure. */
export const ErrorEnvelopeWithIssues = Type.Object(
  {
    ok: Type.Literal(false),
    error: Type.String(),
    issues: Type.Optional(Type.Array(ValidationIssue)),
  },
  { title: 'ErrorEnvelopeWithIssues', additionalProperties: false },
)

export type ErrorEnvelope = Static<typeof ErrorEnvelope>

/** What each failure status means, as the OpenAPI response description (texts per operation: docs/errors.md). */
const STATUS_DESCRIPTIONS: Record<number, string> = {
  400: 'the request is malformed or invalid',
  401: 'credential missing, malformed or not valid (never says which)',
  403: 'the credential is valid but not permitted',
  404: 'not found',
  405: 'method not allowed',
  409: 'conflict',
  410: 'gone',
  413: 'too large',
  415: 'unsupported media type',
  429: 'rate limited: wait `Retry-After` seconds',
  500: 'internal failure (the cause is logged, never sent)',
  503: 'temporarily unavailable; retry is safe',
}

/** Contract 7.3: every 429 carries `Retry-After`, integer seconds, minimum 1. */
const RETRY_AFTER_HEADER = {
  'Retry-After': {
    type: 'integer',
    minimum: 1,
    description: 'seconds to wait before retrying: 60 for the 60-second window, the seconds left for the 24-hour window (contract 7.3)',
  },
} as const

/**
 * One failure response of a route schema, in the media-type form fastify and @fastify/swagger
 * both read: a description, the envelope as `application/json`, and `Retry-After` on a 429.
 * Typed by its envelope, so the TypeBox type provider counts the envelope among the replies a
 * route may send. Errors are sent already serialized (http/error-handler.ts), so this only
 * describes them.
 */
interface FailureResponse<E extends TSchema> {
  description: string
  headers?: typeof RETRY_AFTER_HEADER
  content: { 'application/json': { schema: E } }
}

/** the failure responses of the given statuses, one member per status (typed by its literal) */
export type FailureResponses<S extends number, E extends TSchema> = { [K in S]: FailureResponse<E> }

function failureResponse<E extends TSchema>(status: number, envelope: E): FailureResponse<E> {
  return {
    description: STATUS_DESCRIPTIONS[status] ?? 'failure',
    ...(status === 429 ? { headers: RETRY_AFTER_HEADER } : {}),
    content: { 'application/json': { schema: envelope } },
  }
}

/**
 * Response schemas for a route's failure statuses, for OpenAPI:
 * `response: { 202: Accepted, ...errorResponses(400, 401, 403) }`.
 */
export function errorResponses<const S extends readonly number[]>(...statuses: S): FailureResponses<S[number], typeof ErrorEnvelope> {
  const out: Partial<Record<number, FailureResponse<typeof ErrorEnvelope>>> = {}
  for (const s of statuses) out[s] = failureResponse(s, ErrorEnvelope)
  return out as FailureResponses<S[number], typeof ErrorEnvelope>
}

/** As errorResponses; a 400 carries the validation `issues` (link minting, the management API). */
export function errorResponsesWithIssues<const S extends readonly number[]>(
  ...statuses: S
): FailureResponses<S[number], typeof ErrorEnvelope | typeof ErrorEnvelopeWithIssues> {
  const out: Partial<Record<number, FailureResponse<typeof ErrorEnvelope | typeof ErrorEnvelopeWithIssues>>> = {}
  for (const s of statuses) out[s] = failureResponse(s, s === 400 ? ErrorEnvelopeWithIssues : ErrorEnvelope)
  return out as FailureResponses<S[number], typeof ErrorEnvelope | typeof ErrorEnvelopeWithIssues>
}
