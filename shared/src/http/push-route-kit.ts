import { Type } from 'typebox'
import { AppError, isAppError } from '../errors/app-error.ts'

/*
 * What the push routes share: the edge's (contract 4.3–4.5) and the portal's deprecated origin
 * fallbacks (4.6) take the same bodies, source ids and tokens, and answer failures alike.
 */

/**
 * Bodies are checked by hand (domain/ingest/push-body.ts: cheap on 10,000 records, and more than
 * 10000 records must be a 413, not a schema 400); the route schemas only document them.
 */
export const documentationOnly = () => () => true

/** Infrastructure failures (tenant store, rate limiter) are retryable: 503, never a 500. */
export const retryable = (err: unknown): AppError => (isAppError(err) ? err : new AppError('temporarily_unavailable', { cause: err }))

export const SourceIdParams = Type.Object({
  sourceId: Type.String({ description: 'the per-source id of the webhook connection, as shown in its webhook URL' }),
})

/** the rest of the path after the route's prefix (find-my-way's wildcard parameter) */
export const WildcardParams = Type.Object({ '*': Type.String() })

export const TokenQuery = Type.Object({
  token: Type.Optional(
    Type.String({ description: 'source token, only for senders that cannot set `x-webhook-token` (the header wins when both are present)' }),
  ),
})
