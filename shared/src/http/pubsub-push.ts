import { AppError } from '../errors/app-error.ts'
import type { App } from './base-app.ts'
import { checkInternalCaller, type InternalCallers } from './internal-callers.ts'
import type { MessageHandler, QueueMessage } from '../ports/queue.ts'
import { inMessageSpan } from '../logging/trace-propagation.ts'
import { scanPushEnvelopeWithoutData } from './push-envelope-stream.ts'

export interface PushEndpointOptions {
  /** who may post: the push subscription's OIDC identity, or loopback only (local) */
  callers: InternalCallers
  /**
   * the handler reads the attributes only: the body is scanned as it arrives and `message.data`
   * dropped unread (push-envelope-stream.ts); the message reaches the handler with empty data
   */
  withoutData?: boolean
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

/**
 * Registers `POST path` for a Pub/Sub PUSH subscription (production: Pub/Sub → Cloud Run).
 * Answers 204 when the handler acks, 503 when it nacks or throws (Pub/Sub retries any non-2xx
 * with its backoff), 400 for a body that is not a push envelope (Pub/Sub retries that too, so a
 * dead-letter policy on the subscription catches it; a `no_wrapper` subscription's bare payload
 * lands here), 401 when the caller is not the subscription's identity (checked before the body).
 */
export function registerPushEndpoint(app: App, path: string, handler: MessageHandler, options: PushEndpointOptions): void {
  if (!options.withoutData) {
    routePush(app, path, handler, options)
    return
  }
  // its own scope: this JSON parser applies to this route only
  void app.register(async (scope) => {
    scope.removeContentTypeParser('application/json')
    scope.addContentTypeParser('application/json', (_request, payload, done) => {
      const scanner = scanPushEnvelopeWithoutData()
      let bytes = 0
      let failed = false
      payload.on('data', (chunk: Buffer) => {
        if (failed) return
        bytes += chunk.length
        if (bytes > PUSH_BODY_LIMIT) {
          failed = true
          done(new AppError('payload_too_large'), undefined)
          payload.resume()
          return
        }
        scanner.write(chunk)
      })
      payload.on('error', (err) => {
        if (!failed) done(err, undefined)
        failed = true
      })
      payload.on('end', () => {
        if (failed) return
        try {
          done(null, JSON.parse(scanner.end()))
        } catch {
          done(new AppError('invalid_payload'), undefined)
        }
      })
    })
    routePush(scope, path, handler, options)
  })
}

function routePush(app: App, path: string, handler: MessageHandler, options: PushEndpointOptions): void {
  app.post(
    path,
    {
      schema: { hide: true },
      bodyLimit: PUSH_BODY_LIMIT,
      onRequest: async (request) => checkInternalCaller(request, options.callers),
    },
    async (request, reply) => {
      const message = decodePushEnvelope(request.body)
      let result: 'ack' | 'nack'
      try {
        // the publisher's trace (the message's attribute), not the push request's
        result = (await inMessageSpan(path.slice(path.lastIndexOf('/') + 1), message, () => handler(message))) === 'ack' ? 'ack' : 'nack'
      } catch (err) {
        request.log.error({ err, messageId: message.id }, 'push message handler failed')
        result = 'nack'
      }
      if (result === 'nack') throw new AppError('temporarily_unavailable')
      return reply.code(204).send()
    },
  )
}
