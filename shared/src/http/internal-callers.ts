import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import type { PlatformConfig } from '../config/config.ts'
import { isLoopbackAddress } from '../config/loopback.ts'
import { AppError } from '../errors/app-error.ts'
import { oidcVerifierFor, type IdTokenVerifier, type OidcIdentity } from './oidc.ts'

/**
 * Who may call an internal route (`/pubsub/*`, `/tasks/deliver`). Never fails open:
 * - an identity is configured (always in production: loadConfig refuses to start without it):
 *   only a Bearer ID token of exactly that audience and email, from any address, loopback included;
 * - none (local development): only callers whose socket is on loopback. The socket address, not
 *   X-Forwarded-For (trustProxy would let any client claim 127.0.0.1 there).
 *
 * Behind Cloud Run's front end (INTERNAL_AUTH=front-end) the token is the one the front end
 * checked: `X-Serverless-Authorization` when the request has it (Cloud Run checks that header in
 * preference and then passes `Authorization` through untouched, so there it could be anything),
 * else `Authorization`. Either arrives with its signature stripped (oidc.ts).
 *
 * On this machine (`npm run start:cloud`) the front end is played by the push relay and the Cloud
 * Tasks stand-in, and any local process could send a stripped token as well: there each request
 * must also carry the run's secret in `X-Local-Front-End` (LOCAL_FRONT_END_SECRET), which only
 * they add. On Cloud Run the front end is the only way in (ingress internal, invoker check on:
 * test/infra/cloud-run.test.ts), and the variable is refused.
 */
export interface InternalCallers {
  identity: OidcIdentity | null
  verify: IdTokenVerifier
  /** INTERNAL_AUTH=front-end: read the header Cloud Run's front end checked (missing: false) */
  frontEnd?: boolean
  /** in front-end mode, the X-Local-Front-End value the played front end adds (null/absent: none required) */
  localFrontEndSecret?: string | null
}

type CallerConfig = Pick<PlatformConfig, 'oidc'> & Partial<Pick<PlatformConfig, 'internalAuth' | 'localFrontEndSecret'>>

const LOCAL_FRONT_END_HEADER = 'x-local-front-end'

function callersOf(config: CallerConfig, identity: OidcIdentity | null): InternalCallers {
  return {
    identity,
    verify: oidcVerifierFor(config),
    frontEnd: config.internalAuth === 'front-end',
    localFrontEndSecret: config.localFrontEndSecret ?? null,
  }
}

/** The Pub/Sub push identity: PUSH_AUDIENCE + PUSH_SERVICE_ACCOUNT. */
export function pushCallers(config: CallerConfig & Pick<PlatformConfig, 'pushAudience' | 'pushServiceAccount'>): InternalCallers {
  const identity = config.pushAudience && config.pushServiceAccount ? { audience: config.pushAudience, email: config.pushServiceAccount } : null
  return callersOf(config, identity)
}

/** The Cloud Tasks identity: audience DISPATCHER_URL, email TASKS_SERVICE_ACCOUNT. */
export function taskCallers(config: CallerConfig & Pick<PlatformConfig, 'dispatcherUrl' | 'tasksServiceAccount'>): InternalCallers {
  const identity = config.dispatcherUrl && config.tasksServiceAccount ? { audience: config.dispatcherUrl, email: config.tasksServiceAccount } : null
  return callersOf(config, identity)
}

function bearerOf(request: FastifyRequest, frontEnd: boolean | undefined): string | null {
  const serverless = request.headers['x-serverless-authorization']
  const header = frontEnd === true && serverless !== undefined ? serverless : request.headers.authorization
  if (typeof header !== 'string') return null
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
  return match ? match[1]! : null
}

/** Equal in constant time (both hashed first, so their lengths do not show either). */
function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest()
  return timingSafeEqual(digest(given), digest(expected))
}

/** Throws AppError('unauthorized') unless the request comes from an admitted caller. */
export async function checkInternalCaller(request: FastifyRequest, callers: InternalCallers): Promise<void> {
  if (callers.identity === null) {
    if (!isLoopbackAddress(request.raw.socket.remoteAddress)) throw new AppError('unauthorized')
    return
  }
  if (callers.frontEnd === true && callers.localFrontEndSecret) {
    const given = request.headers[LOCAL_FRONT_END_HEADER]
    if (typeof given !== 'string' || !sameSecret(given, callers.localFrontEndSecret)) {
      request.log.warn({ path: request.routeOptions.url }, 'internal route: not sent through the local front end (X-Local-Front-End)')
      throw new AppError('unauthorized')
    }
  }
  const token = bearerOf(request, callers.frontEnd)
  if (!token) throw new AppError('unauthorized')
  try {
    await callers.verify(token, callers.identity)
  } catch (cause) {
    request.log.warn({ reason: (cause as Error).message, path: request.routeOptions.url }, 'internal route: token refused')
    throw new AppError('unauthorized', { cause })
  }
}
