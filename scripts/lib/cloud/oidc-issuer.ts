/**
 * The local OIDC issuer: what Google's token service is to Pub/Sub push and Cloud Tasks. It signs
 * ID tokens (RS256) with the claims Google puts in a service account's ID token, and serves its
 * keys as JWKS on loopback, where the services fetch them (OIDC_ISSUER / OIDC_JWKS_URL) and verify
 * with the same code as in production. The key pair lives in memory, for one run.
 */
import { createHash } from 'node:crypto'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose'
import { listen, sendJson, type Listener } from './http.ts'

export interface OidcIssuer {
  /** the `iss` of every token (OIDC_ISSUER) */
  issuer: string
  jwksUrl: string
  /** an ID token for service account `email`, audience `audience`, valid for an hour */
  mint(email: string, audience: string): Promise<string>
  close(): Promise<void>
}

/** Google's `sub` of a service account is its numeric unique id; a stable stand-in per email. */
function subjectOf(email: string): string {
  const digits = BigInt(`0x${createHash('sha256').update(email).digest('hex').slice(0, 16)}`).toString()
  return `1${digits.padStart(20, '0').slice(0, 20)}`
}

export async function startOidcIssuer(): Promise<OidcIssuer> {
  const { publicKey, privateKey } = await generateKeyPair('RS256')
  const kid = createHash('sha256')
    .update(JSON.stringify(await exportJWK(publicKey)))
    .digest('hex')
    .slice(0, 16)
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' }
  let origin = ''
  const listener: Listener = await listen((req, res) => {
    const path = (req.url ?? '').split('?')[0]
    if (req.method === 'GET' && path === '/jwks') return sendJson(res, 200, { keys: [jwk] })
    if (req.method === 'GET' && path === '/.well-known/openid-configuration') {
      return sendJson(res, 200, {
        issuer: origin,
        jwks_uri: `${origin}/jwks`,
        id_token_signing_alg_values_supported: ['RS256'],
        response_types_supported: ['id_token'],
        subject_types_supported: ['public'],
        claims_supported: ['aud', 'email', 'email_verified', 'exp', 'iat', 'iss', 'sub'],
      })
    }
    sendJson(res, 404, { error: 'not found' })
  })
  origin = listener.origin
  const key: CryptoKey = privateKey
  return {
    issuer: origin,
    jwksUrl: `${origin}/jwks`,
    async mint(email, audience) {
      const now = Math.floor(Date.now() / 1000)
      const sub = subjectOf(email)
      return new SignJWT({ iss: origin, aud: audience, sub, azp: sub, email, email_verified: true, iat: now, exp: now + 3600 })
        .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
        .sign(key)
    },
    close: () => listener.close(),
  }
}
