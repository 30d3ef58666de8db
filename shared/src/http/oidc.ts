import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose'
import { LRUCache } from 'lru-cache'
import type { PlatformConfig } from '../config/config.ts'

/**
 * Verification of the OIDC ID tokens Pub/Sub push and Cloud Tasks attach to their requests.
 * One code path for production and for the deployed shape on this machine: only the issuer and
 * its key set differ (Google's, or OIDC_ISSUER / OIDC_JWKS_URL's local issuer).
 *
 * Behind Cloud Run's front end (invoker IAM on), the token reaches the container with its
 * signature replaced by SIGNATURE_REMOVED_BY_GOOGLE: the front end has verified the signature and
 * the invoker grant itself, and strips it so the token cannot be replayed elsewhere. Such a token
 * is accepted only with `frontEnd` (INTERNAL_AUTH=front-end), on its claims, which are checked as
 * strictly as a signed token's; with `verify` it is refused. A token with any other third part is
 * verified cryptographically in both modes. docs/architecture.md, "Internal routes", has the
 * threat model.
 */

/** Who may call an internal route: the token's `aud` and the service account it was minted for. */
export interface OidcIdentity {
  audience: string
  email: string
}

/** Resolves when `token` is a valid ID token of exactly `expected`; throws otherwise. */
export type IdTokenVerifier = (token: string, expected: OidcIdentity) => Promise<void>

/** Google signs ID tokens with either spelling of its issuer. */
const GOOGLE_ISSUERS = ['https://accounts.google.com', 'accounts.google.com'] as const
const GOOGLE_JWKS_URL = 'https://www.googleapis.com/oauth2/v3/certs'

/**
 * What Cloud Run's front end puts in place of a verified token's signature
 * (cloud.google.com/run/docs/troubleshooting, "signature removed").
 */
export const SIGNATURE_REMOVED = 'SIGNATURE_REMOVED_BY_GOOGLE'

export interface OidcVerifierOptions {
  issuers: readonly string[]
  jwksUrl: string
  /**
   * true only where Cloud Run's front end has verified the token before it reaches us
   * (INTERNAL_AUTH=front-end): a signature-stripped token is then accepted on its claims
   */
  frontEnd?: boolean
}

/** Google signs with RS256; nothing else is accepted (no `none`, no HMAC with a public key). */
const ALGORITHMS = ['RS256'] as const
/** the skew allowed on exp/iat between Google's clock (or the local issuer's) and ours */
const CLOCK_TOLERANCE_S = 30
const REQUIRED_CLAIMS = ['iss', 'aud', 'exp', 'iat', 'email'] as const

/** Was this token's signature replaced by Cloud Run's front end? (`header.payload.SIGNATURE_REMOVED_BY_GOOGLE`) */
export function isSignatureRemoved(token: string): boolean {
  const parts = token.split('.')
  return parts.length === 3 && parts[2] === SIGNATURE_REMOVED
}

const isNumericDate = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value)

/**
 * The claims of a signature-stripped token, checked as jwtVerify checks a signed one (same
 * issuers, audience, required claims, exp/nbf with the same tolerance) plus its header's alg:
 * the front end only passes RS256 tokens Google signed, so anything else was not through it.
 */
function strippedClaims(token: string, options: OidcVerifierOptions, audience: string): JWTPayload {
  const header = decodeProtectedHeader(token)
  if (header.alg !== 'RS256') throw new Error(`token alg ${JSON.stringify(header.alg)} is not RS256`)
  const payload = decodeJwt(token)
  for (const claim of REQUIRED_CLAIMS) {
    if (!Object.hasOwn(payload, claim)) throw new Error(`missing required "${claim}" claim`)
  }
  if (typeof payload.iss !== 'string' || !options.issuers.includes(payload.iss)) throw new Error('unexpected "iss" claim value')
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud]
  if (!audiences.includes(audience)) throw new Error('unexpected "aud" claim value')
  const now = Math.floor(Date.now() / 1000)
  if (!isNumericDate(payload.iat)) throw new Error('"iat" claim must be a number')
  if (!isNumericDate(payload.exp)) throw new Error('"exp" claim must be a number')
  if (payload.exp <= now - CLOCK_TOLERANCE_S) throw new Error('"exp" claim timestamp check failed')
  if (payload.nbf !== undefined) {
    if (!isNumericDate(payload.nbf)) throw new Error('"nbf" claim must be a number')
    if (payload.nbf > now + CLOCK_TOLERANCE_S) throw new Error('"nbf" claim timestamp check failed')
  }
  return payload
}

/**
 * A verifier for one issuer. The key set is fetched on first use and cached by jose (refetched
 * at most every 10 minutes, or sooner for an unknown `kid` with a 30 s cooldown), so a request
 * costs a signature check, not a fetch.
 */
export function createOidcVerifier(options: OidcVerifierOptions): IdTokenVerifier {
  let keys: JWTVerifyGetKey | null = null
  return async (token, expected) => {
    let payload: JWTPayload
    if (isSignatureRemoved(token)) {
      // never fail open: without a front end that checked it, a stripped token proves nothing
      if (!options.frontEnd) throw new Error('token signature removed, but this service verifies signatures itself (INTERNAL_AUTH=verify)')
      payload = strippedClaims(token, options, expected.audience)
    } else {
      keys ??= createRemoteJWKSet(new URL(options.jwksUrl), { timeoutDuration: 5000 })
      ;({ payload } = await jwtVerify(token, keys, {
        issuer: [...options.issuers],
        audience: expected.audience,
        algorithms: [...ALGORITHMS],
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: [...REQUIRED_CLAIMS],
      }))
    }
    if (payload.email !== expected.email) throw new Error('token of another identity')
    if (payload.email_verified !== true) throw new Error('token email not verified')
  }
}

/** one per issuer and mode: a process configures one or two, so the bound only guards against misuse */
const verifiers = new LRUCache<string, IdTokenVerifier>({ max: 16 })

/**
 * The process-wide verifier of the configured issuer and INTERNAL_AUTH (one key cache per
 * issuer and mode). `internalAuth` missing counts as `verify`.
 */
export function oidcVerifierFor(config: Pick<PlatformConfig, 'oidc'> & Partial<Pick<PlatformConfig, 'internalAuth'>>): IdTokenVerifier {
  const frontEnd = config.internalAuth === 'front-end'
  const options: OidcVerifierOptions = config.oidc
    ? { issuers: [config.oidc.issuer], jwksUrl: config.oidc.jwksUrl, frontEnd }
    : { issuers: GOOGLE_ISSUERS, jwksUrl: GOOGLE_JWKS_URL, frontEnd }
  const key = `${options.jwksUrl} ${options.issuers.join(' ')} ${frontEnd ? 'front-end' : 'verify'}`
  let verifier = verifiers.get(key)
  if (!verifier) {
    verifier = createOidcVerifier(options)
    verifiers.set(key, verifier)
  }
  return verifier
}
