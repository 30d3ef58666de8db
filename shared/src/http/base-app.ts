import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
// @fastify/swagger's types add the OpenAPI keys (tags, summary, security, operationId, hide, …)
// to FastifySchema: a route schema carrying them type-checks as it is, and the TypeBox type
// provider infers params, body, querystring and replies from it (no casts in the routes)
import type {} from '@fastify/swagger'
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { registerJsonBodyParser } from './json-body.ts'
import { registerErrorHandling, sendError, toAppError } from './error-handler.ts'
import { formatSchemaErrors } from './validation.ts'
import { createSerializerCompiler, createValidatorCompiler } from './route-schema-compilers.ts'
import { traceLogFields } from '../logging/trace.ts'
import { requestTraceContext } from '../logging/trace-propagation.ts'
import { REQUEST_SCOPED_LOGGER, withTraceFields } from '../logging/trace-scope.ts'
import { HTTP_TIMEOUTS, type HttpTimeouts } from './timeouts.ts'
import { handleClientError, refuseConnect } from './client-errors.ts'
import { closesAfterEarlyAnswer, drainAfterAnswer, hasUnreadBody, LINGER, type LingerLimits } from './lingering-close.ts'
import { markRepeatedCredentialHeaders } from './credential-headers.ts'
import { refuseAmbiguousTarget, routableUrl } from './request-target.ts'
import { answerUnroutedAtOnce } from './unrouted.ts'
import { ignoreBodiesOfBodylessRoutes } from './bodyless-routes.ts'
import { CloudRequestLogController } from './request-log.ts'
import { createReadiness, type Readiness } from './readiness.ts'

export interface BaseAppOptions {
  logger: FastifyBaseLogger
  /** largest accepted body in bytes, enforced while the body streams in */
  bodyLimit?: number
  /** GCP project, for trace correlation in logs */
  gcpProject?: string | null
  /**
   * proxies in front of the service whose forwarding headers are believed (TRUSTED_PROXY_HOPS):
   * 0 believes none (the socket's peer is the client)
   */
  trustedProxyHops?: number
  /** connection timeouts (tests shorten them; timeouts.ts explains the defaults) */
  timeouts?: Partial<HttpTimeouts>
  /** how long an early answer keeps draining the unread body (lingering-close.ts) */
  linger?: LingerLimits
  /**
   * what /readyz reports (http/readiness.ts: the service's dependency checks); without one,
   * ready from when the app listens until it starts closing
   */
  readiness?: Readiness
}

export type App = FastifyInstance<
  import('node:http').Server,
  import('node:http').IncomingMessage,
  import('node:http').ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>

/**
 * The request id: always one of our own (a random UUID). Never a caller's header: not
 * `x-request-id`, and not the trace either (issue 21 item 8): `traceparent` is whatever the
 * caller sent when no Google front end replaced it, so a caller could give its requests the id of
 * another request's lines. The trace is logged apart, as `logging.googleapis.com/trace` and
 * `…/spanId` (logging/trace.ts), which is how Cloud Logging joins a line to its trace anyway.
 */
function requestIdOf(_req: IncomingMessage): string {
  return randomUUID()
}

/** where fastify keeps the headers set with reply.header() until it writes the answer (lib/symbols.js) */
let replyHeadersKey: symbol | undefined

/**
 * Takes fastify's own `connection: close` off an early answer. fastify sets it on the answer
 * after every body error (a 413 over the cap among them) because the client may still be sending;
 * the drain reads what it sends, so the connection can stay usable, and node gives the answer the
 * `Connection` and `Keep-Alive` headers it gives any other. Not reply.removeHeader: that also
 * removes the header from node's answer, which node takes as "send no `Connection` header".
 */
function withoutFastifyClose(reply: FastifyReply): void {
  replyHeadersKey ??= Object.getOwnPropertySymbols(reply).find((key) => key.description === 'fastify.reply.headers')
  const headers = replyHeadersKey && (reply as unknown as Record<symbol, Record<string, unknown> | undefined>)[replyHeadersKey]
  if (headers) delete headers.connection
  // a fastify that keeps them elsewhere: the connection stays usable all the same, without the header
  else if (reply.hasHeader('connection')) reply.removeHeader('connection')
}

/**
 * The fastify instance every service starts from: TypeBox types, strict body validation,
 * safe JSON parsing that keeps the raw bytes, the contract's error envelope (also for node's own
 * 400/408/431), connection timeouts, answers that reach clients still sending (lingering close),
 * forwarding headers believed only from the configured proxy hops, one request log line in
 * Cloud Logging's `httpRequest` shape with trace correlation on every line of a request, and
 * health endpoints. It never listens; `server.ts` does.
 */
export function buildBaseApp(options: BaseAppOptions): App {
  const timeouts = { ...HTTP_TIMEOUTS, ...options.timeouts }
  const linger = options.linger ?? LINGER
  const hops = options.trustedProxyHops ?? 0
  const project = options.gcpProject ?? null
  const app = Fastify({
    loggerInstance: options.logger,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    genReqId: requestIdOf,
    // a hop count, not `true`: X-Forwarded-For is believed only as far as our own proxies append
    // it (hop 0 is the socket's peer, then the header's entries from the right)
    trustProxy: hops > 0 ? (_address: string, hop: number) => hop < hops : false,
    http: {
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      connectionsCheckingInterval: timeouts.connectionsCheckingIntervalMs,
      maxHeaderSize: timeouts.maxHeaderSize,
      // an HTTP/1.1 request without Host is refused in onRequest, in the envelope (request-target.ts)
      requireHostHeader: false,
    },
    requestTimeout: timeouts.requestTimeoutMs,
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    connectionTimeout: 0,
    clientErrorHandler(err, socket) {
      handleClientError(options.logger, err, socket)
    },
    logController: new CloudRequestLogController(),
    // every line logged through request.log carries the request's trace (as bindings; marked so
    // the logger's mixin does not add them a second time: logging/trace-scope.ts)
    childLoggerFactory: (logger, bindings, childOptions, rawReq) => {
      const child = logger.child({ ...bindings, ...traceLogFields(requestTraceContext(rawReq.headers), project) }, childOptions)
      ;(child as unknown as Record<symbol, boolean>)[REQUEST_SCOPED_LOGGER] = true
      return child
    },
    // a long path parameter (an unknown source id of 1,000 characters) reaches the route and gets
    // the route's own answer (401 for a source id) instead of the router's 414
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
    // a path that does not percent-decode is routed as the text it is (request-target.ts)
    rewriteUrl: (req) => routableUrl(req.url ?? '/'),
    // errors raised before routing (bad URL encoding, …) use the contract's envelope too
    frameworkErrors: (error, request, reply) => {
      sendError(reply, toAppError(error, request))
    },
    return503OnClosing: true,
    // a validation error's text names a bounded number of problems (http/validation.ts)
    schemaErrorFormatter: (errors, dataVar) => formatSchemaErrors(errors, dataVar),
  }).withTypeProvider<TypeBoxTypeProvider>()

  // a CONNECT gets the envelope's 405 instead of a socket destroyed unanswered (client-errors.ts)
  app.server.on('connect', (_req: IncomingMessage, socket: import('node:net').Socket) => refuseConnect(options.logger, socket))

  // compiled once per schema for the process, whichever route or app declares it again
  app.setValidatorCompiler(createValidatorCompiler())
  app.setSerializerCompiler(createSerializerCompiler())
  registerJsonBodyParser(app)
  registerErrorHandling(app)

  // the rest of the request runs in the scope of its id and trace, so what domain code logs
  // through another logger (deps.logger) is found with the request's lines (logging/trace-scope.ts)
  app.addHook('onRequest', (request, _reply, done) => {
    withTraceFields({ reqId: request.id, ...traceLogFields(requestTraceContext(request.raw.headers), project) }, done)
  })
  // first of the checks: a fragment in the target or a second Host is refused (request-target.ts);
  // credential checks below see a repeated credential header as malformed
  // callback-style hooks here and below: they run on every request, and an async hook costs a
  // promise and a microtask turn more each
  app.addHook('onRequest', (request, _reply, done) => {
    try {
      refuseAmbiguousTarget(request.raw)
      markRepeatedCredentialHeaders(request.raw)
    } catch (err) {
      done(err as Error)
      return
    }
    done()
  })
  // a request no route serves (unknown path, other method, OPTIONS, HEAD without GET) gets its
  // not-found answer now, before its body is read (unrouted.ts)
  answerUnroutedAtOnce(app)
  // a route that takes no body (DELETE without a body schema) never reads one (bodyless-routes.ts)
  ignoreBodiesOfBodylessRoutes(app)
  // an answer sent before the body was read (over the cap, refused credential, …) must still
  // reach a client that is sending it: the rest is drained, within bounds (lingering-close.ts).
  // The connection closes only for a body declared beyond the bound (or a 408); otherwise it
  // stays usable and the answer has the headers of any other (withoutFastifyClose)
  app.addHook('onSend', (request, reply, payload, done) => {
    if (hasUnreadBody(request.raw)) {
      if (closesAfterEarlyAnswer(request.raw, reply.statusCode, linger)) reply.header('connection', 'close')
      else withoutFastifyClose(reply)
      drainAfterAnswer(request.raw, reply.raw, linger)
    } else if (reply.hasHeader('connection')) {
      // the body was read whole: fastify's close after a body error (not JSON) has nothing left
      // to guard against, so the answer keeps the connection like any other. No route sets the
      // header itself, and a closing server's 503 is written by fastify past these hooks.
      withoutFastifyClose(reply)
    }
    done(null, payload)
  })

  // liveness: the event loop answers. Readiness: from state kept by `readiness` (no check runs
  // for the request, so neither hangs on a dependency); checking starts once the app listens
  const readiness = options.readiness ?? createReadiness({})
  app.addHook('onListen', async () => {
    await readiness.start()
  })
  app.addHook('preClose', async () => {
    readiness.drain()
  })
  app.addHook('onClose', async () => {
    readiness.stop()
  })
  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }))
  app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
    const { ready, reasons } = readiness.report()
    return reply
      .code(ready ? 200 : 503)
      .type('application/json')
      .send(JSON.stringify(ready ? { ok: true } : { ok: false, reasons }))
  })
  return app
}
