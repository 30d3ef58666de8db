import type { FastifyRequest } from 'fastify'
import { AppError } from '../../errors/app-error.ts'
import type { App } from '../../http/base-app.ts'
import type { MessageHandler, QueueMessage } from './interface.ts'

/** Checks a Google-signed OIDC token for `audience`; throws when it is not valid. */
export type IdTokenVerifier = (token: string, audience: string) => Promise<void>

export interface PushEndpointOptions {
  /** expected `aud` of the push subscription's OIDC token; null disables the check (emulator, local) */
  audience: string | null
  /** when set, the token must also carry this service-account email */
  serviceAccountEmail?: string
  /** replaces the google-auth-library check (tests) */
  verifyIdToken?: IdTokenVerifier
}

/** A push body can hold a 10 MB message, base64-encoded (4/3) plus the envelope. */
const PUSH_BODY_LIMIT = 14 * 1024 * 1024 + 64 * 1024
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * Turns a Pub/Sub push request body
 * `{message:{data, attributes?, messageId, publishTime}, subscription, deliveryAttempt?}` into a
 * QueueMessage. `deliveryAttempt` is only present when the subscription has a dead-letter policy;
 * without it the message counts as a first delivery.
 */
export function decodePushEnvelope(body: unknown): QueueMessage {
  const invalid = () => new AppError('invalid_payload')
  if (!isRecord(body) || !isRecord(body.message) || typeof body.subscription !== 'string') throw invalid()
  const { data, attributes, messageId, publishTime } = body.message
  const message_id = messageId ?? body.message.message_id
  if (typeof message_id !== 'string' || message_id === '') throw invalid()
  const published = publishTime ?? body.message.publish_time
  if (typeof published !== 'string' || Number.isNaN(Date.parse(published))) throw invalid()
  if (data !== undefined && (typeof data !== 'string' || data.length % 4 !== 0 || !BASE64.test(data))) throw invalid()
  const attrs: Record<string, string> = {}
  if (attributes !== undefined && attributes !== null) {
    if (!isRecord(attributes)) throw invalid()
    for (const [k, v] of Object.entries(attributes)) {
      if (typeof v !== 'string') throw invalid()
      attrs[k] = v
    }
  }
  const attempt = body.deliveryAttempt
  if (attempt !== undefined && attempt !== null && (!Number.isInteger(attempt) || (attempt as number) < 1)) throw invalid()
  return {
    id: message_id,
    data: Buffer.from((data as string | undefined) ?? '', 'base64'),
    attributes: attrs,
    deliveryAttempt: typeof attempt === 'number' ? attempt : 1,
    publishedAt: new Date(published).toISOString(),
  }
}

/** The default verifier: google-auth-library (a dependency of the Google clients), loaded on first use. */
function googleVerifier(serviceAccountEmail: string | undefined): IdTokenVerifier {
  let client: Promise<import('google-auth-library').OAuth2Client> | null = null
  return async (token, audience) => {
    client ??= import('google-auth-library').then((m) => new m.OAuth2Client())
    const ticket = await (await client).verifyIdToken({ idToken: token, audience })
    const payload = ticket.getPayload()
    if (!payload) throw new Error('token without payload')
    if (serviceAccountEmail && (payload.email !== serviceAccountEmail || payload.email_verified !== true)) {
      throw new Error('token of another identity')
    }
  }
}

function bearerOf(request: FastifyRequest): string | null {
  const header = request.headers.authorization
  if (typeof header !== 'string') return null
  const match = /^Bearer\s+(\S+)$/i.exec(header)
  return match ? match[1]! : null
}

/**
 * Registers `POST path` for a Pub/Sub PUSH subscription (production: Pub/Sub → Cloud Run).
 * Answers 204 when the handler acks, 503 when it nacks or throws (Pub/Sub retries any non-2xx
 * with its backoff), 400 for a body that is not a push envelope (Pub/Sub retries that too, so a
 * dead-letter policy on the subscription catches it), 401 when the OIDC token does not verify.
 */
export function registerPushEndpoint(app: App, path: string, handler: MessageHandler, options: PushEndpointOptions): void {
  const verify = options.audience === null ? null : (options.verifyIdToken ?? googleVerifier(options.serviceAccountEmail))
  app.post(path, { schema: { hide: true } as never, bodyLimit: PUSH_BODY_LIMIT }, async (request, reply) => {
    if (verify) {
      const token = bearerOf(request)
      if (!token) throw new AppError('unauthorized')
      try {
        await verify(token, options.audience!)
      } catch (cause) {
        throw new AppError('unauthorized', { cause })
      }
    }
    const message = decodePushEnvelope(request.body)
    let result: 'ack' | 'nack'
    try {
      result = (await handler(message)) === 'ack' ? 'ack' : 'nack'
    } catch (err) {
      request.log.error({ err, messageId: message.id }, 'push message handler failed')
      result = 'nack'
    }
    if (result === 'nack') throw new AppError('temporarily_unavailable')
    return reply.code(204).send()
  })
}

/** Push-endpoint options from the platform configuration (PUSH_AUDIENCE, TASKS_SERVICE_ACCOUNT). */
export function pushOptionsFromConfig(config: { pushAudience: string | null; tasksServiceAccount: string | null }): PushEndpointOptions {
  return { audience: config.pushAudience, ...(config.tasksServiceAccount ? { serviceAccountEmail: config.tasksServiceAccount } : {}) }
}
