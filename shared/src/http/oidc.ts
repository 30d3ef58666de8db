import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose'
import type { PlatformConfig } from '../config/config.ts'

/**
 * Verification of the OIDC ID tokens Pub/Sub push and Cloud Tasks attach to their requests.
 * One code path for production and for the deployed shape on this machine: only the issuer and
 * its key set differ (Google's, or OIDC_ISSUER / OIDC_JWKS_URL's local issuer).
 */

/** Who may call an internal route: the token's `aud` and the service account it was minted for. */
export interface OidcIdentity {
  audience: string
  email: string
}

/** Resolves when `token` is a valid ID token of exactly `expected`; throws otherwise. */
export type IdTokenVerifier = (token: string, expected: OidcIdentity) => Promise<void>

/** Google signs ID tokens with either spelling of its issuer. */
export const GOOGLE_ISSUERS = ['https://accounts.google.com', 'accounts.google.com'] as const
export const GOOGLE_JWKS_URL = 'https://www.googleapis.com/oauth2/v3/certs'

export interface OidcVerifierOptions {
  issuers: readonly string[]
  jwksUrl: string
}

/** Google signs with RS256; nothing else is accepted (no `none`, no HMAC with a public key). */
const ALGORITHMS = ['RS256'] as const
/** the skew allowed on exp/iat between Google's clock (or the local issuer's) and ours */
const CLOCK_TOLERANCE_S = 30

/**
 * A verifier for one issuer. The key set is fetched on first use and cached by jose (refetched
 * at most every 10 minutes, or sooner for an unknown `kid` with a 30 s cooldown), so a request
 * costs a signature check, not a fetch.
 */
export function createOidcVerifier(options: OidcVerifierOptions): IdTokenVerifier {
  let keys: JWTVerifyGetKey | null = null
  return async (token, expected) => {
    keys ??= createRemoteJWKSet(new URL(options.jwksUrl), { timeoutDuration: 5000 })
    const { payload } = await jwtVerify(token, keys, {
      issuer: [...options.issuers],
      audience: expected.audience,
      algorithms: [...ALGORITHMS],
      clockTolerance: CLOCK_TOLERANCE_S,
      requiredClaims: ['iss', 'aud', 'exp', 'iat', 'email'],
    })
    if (payload.email !== expected.email) throw new Error('token of another identity')
    if (payload.email_verified !== true) throw new Error('token email not verified')
  }
}

const verifiers = new Map<string, IdTokenVerifier>()

/** The process-wide verifier of the configured issuer (one key cache per issuer). */
export function oidcVerifierFor(config: Pick<PlatformConfig, 'oidc'>): IdTokenVerifier {
  const options: OidcVerifierOptions = config.oidc
    ? { issuers: [config.oidc.issuer], jwksUrl: config.oidc.jwksUrl }
    : { issuers: GOOGLE_ISSUERS, jwksUrl: GOOGLE_JWKS_URL }
  const key = `${options.jwksUrl} ${options.issuers.join(' ')}`
  let verifier = verifiers.get(key)
  if (!verifier) {
    verifier = createOidcVerifier(options)
    verifiers.set(key, verifier)
  }
  return verifier
}
