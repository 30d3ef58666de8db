import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { randomUUID } from 'node:crypto'
import { registerJsonBodyParser } from './json-body.ts'
import { registerErrorHandling, sendError, toAppError } from './error-handler.ts'
import { createValidatorCompiler } from './validation.ts'
import { traceFieldOf } from '../logging/logger.ts'

export interface BaseAppOptions {
  logger: FastifyBaseLogger
  /** largest accepted body in bytes, enforced while the body streams in */
  bodyLimit?: number
  /** GCP project, for trace correlation in logs */
  gcpProject?: string | null
  /** extra readiness probe for /readyz */
  ready?: () => Promise<boolean>
}

export type App = FastifyInstance<
  import('node:http').Server, import('node:http').IncomingMessage, import('node:http').ServerResponse,
  FastifyBaseLogger, TypeBoxTypeProvider
>

/**
 * The fastify instance every service starts from: TypeBox types, strict body validation,
 * safe JSON parsing that keeps the raw bytes, the contract's error envelope, Cloud Logging
 * trace correlation and health endpoints. It never listens; `server.ts` does.
 */
export function buildBaseApp(options: BaseAppOptions): App {
  const app = Fastify({
    loggerInstance: options.logger,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    genReqId: (req) => (typeof req.headers['x-request-id'] === 'string' ? req.headers['x-request-id'].slice(0, 128) : randomUUID()),
    trustProxy: true,
    // a long path parameter (an unknown source id of 1,000 characters) reaches the route and gets
    // the route's own answer (401 for a source id) instead of the router's 414
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
    // errors raised before routing (bad URL encoding, …) use the contract's envelope too
    frameworkErrors: (error, request, reply) => {
      sendError(reply, toAppError(error, request))
    },
    return503OnClosing: true,
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.setValidatorCompiler(createValidatorCompiler() as never)
  registerJsonBodyParser(app as unknown as FastifyInstance)
  registerErrorHandling(app as unknown as FastifyInstance)

  app.addHook('onRequest', async (request) => {
    const trace = traceFieldOf(request.headers['x-cloud-trace-context'] as string | undefined, options.gcpProject ?? null)
    if (Object.keys(trace).length > 0) request.log = request.log.child(trace)
  })

  app.get('/healthz', { schema: { hide: true } as never }, async () => ({ ok: true }))
  app.get('/readyz', { schema: { hide: true } as never }, async (_req, reply) => {
    const ok = options.ready ? await options.ready().catch(() => false) : true
    return reply.code(ok ? 200 : 503).type('application/json').send(JSON.stringify({ ok }))
  })
  return app as unknown as App
}
