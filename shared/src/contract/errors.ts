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
export type ValidationIssueType = Static<typeof ValidationIssue>

/**
 * Response schemas for a route's failure statuses, for OpenAPI:
 * `response: { 202: Accepted, ...errorResponses(400, 401, 403) }`.
 */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {}
  for (const s of statuses) out[s] = ErrorEnvelope
  return out
}

export function errorResponsesWithIssues(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {}
  for (const s of statuses) out[s] = s === 400 ? ErrorEnvelopeWithIssues : ErrorEnvelope
  return out
}
