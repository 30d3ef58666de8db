import type { FastifyRequest } from 'fastify'
import type { DomainLogger } from '../ports/deps.ts'

/**
 * The deps a route hands domain code for one request: the same adapters, with the request's own
 * logger, so what the domain logs carries the request id and trace as the request's lines do, and
 * the request id itself (a queued push carries it, so the worker's outcome reaches its debugger entry).
 */
export function withRequestLog<D extends { logger: DomainLogger }>(deps: D, request: FastifyRequest): D & { requestId: string } {
  return { ...deps, logger: request.log, requestId: request.id }
}
