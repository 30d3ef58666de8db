/**
 * Cloud Run's front end, as far as the ID token goes. For a service that requires authentication
 * (no `allUsers` invoker grant), the front end verifies the token itself (signature, audience, and
 * run.routes.invoke for its identity: iam.ts's invokerRefusal, which the push relay and the Cloud
 * Tasks stand-in apply first) and then forwards it to the container with the signature replaced by
 * `SIGNATURE_REMOVED_BY_GOOGLE`, so the container never holds a replayable token (Cloud Run
 * service-to-service authentication; troubleshooting, "signature removed"). A public service's
 * token is not checked and reaches the container as sent.
 *
 * Cloud Run checks `X-Serverless-Authorization` in preference to `Authorization` when a caller
 * sends both; Pub/Sub push and Cloud Tasks send only `Authorization`, so that is all this plays.
 * The services read the header the front end checked (shared/src/http/internal-callers.ts).
 *
 * On Cloud Run the front end is the only way into a service; on this machine any process can
 * connect to a service's port. So the played front end (push relay, Cloud Tasks stand-in) adds
 * the run's secret in `X-Local-Front-End` to what it forwards to a Cloud Run service, and the
 * services, given the same secret in LOCAL_FRONT_END_SECRET, refuse internal requests without it.
 */
import { randomBytes } from 'node:crypto'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { SIGNATURE_REMOVED } from '@lsv/shared/http/oidc.ts'
import { cloudRunResource, type Iam } from './iam.ts'

/** `header.payload.SIGNATURE_REMOVED_BY_GOOGLE`: the token as the container of an authenticated service receives it. */
export function stripSignature(token: string): string {
  // what the front end passes is a JWT it has parsed: refuse to "strip" anything else
  decodeProtectedHeader(token)
  decodeJwt(token)
  const [header, payload] = token.split('.')
  return `${header}.${payload}.${SIGNATURE_REMOVED}`
}

/**
 * The `Authorization` value the container receives for a request that carried `Bearer <token>`:
 * stripped when `service` is a Cloud Run service that requires authentication, as sent when it
 * is public (an `allUsers` invoker grant) or not a Cloud Run service at all (`null`).
 */
export function forwardedAuthorization(iam: Iam, service: string | null, token: string): string {
  const authenticated = service !== null && !iam.allows(null, 'run.routes.invoke', cloudRunResource(service))
  return `Bearer ${authenticated ? stripSignature(token) : token}`
}

/** A new secret for one run of start:cloud (LOCAL_FRONT_END_SECRET's form: 43 base64url characters). */
export function newFrontEndSecret(): string {
  return randomBytes(32).toString('base64url')
}

/** The header that marks a request as forwarded by the played front end (null: nothing to add). */
export function frontEndMark(service: string | null, secret: string | null | undefined): Record<string, string> {
  return service !== null && secret ? { 'x-local-front-end': secret } : {}
}
