import { createServer, type Server } from 'node:http'
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload, type CryptoKey } from 'jose'

/**
 * A local OIDC issuer on loopback, as Google's looks to a verifier: an RS256 key set served as
 * JWKS over HTTP, ID tokens with iss/aud/exp/iat/email/email_verified. `forge` signs with a key
 * that is not in the set (same kid), to prove signatures are checked. `fetches` counts key-set
 * downloads (they must be cached, not fetched per request).
 */
export interface LocalIssuer {
  issuer: string
  jwksUrl: string
  /** a token for `email` and `audience`; `claims` override or add (e.g. exp in the past) */
  token(email: string, audience: string, claims?: JWTPayload): Promise<string>
  /** the same token, signed by a key the issuer never published */
  forge(email: string, audience: string, claims?: JWTPayload): Promise<string>
  fetches(): number
  close(): Promise<void>
}

const KID = 'local-1'

export async function startLocalIssuer(): Promise<LocalIssuer> {
  const real = await generateKeyPair('RS256')
  const other = await generateKeyPair('RS256')
  const jwk = { ...(await exportJWK(real.publicKey)), kid: KID, alg: 'RS256', use: 'sig' }
  let fetches = 0
  const server: Server = createServer((req, res) => {
    if (req.url === '/jwks') {
      fetches++
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ keys: [jwk] }))
      return
    }
    res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  const sign =
    (key: CryptoKey) =>
    async (email: string, audience: string, claims: JWTPayload = {}) => {
      const now = Math.floor(Date.now() / 1000)
      return new SignJWT({ email, email_verified: true, sub: `sub-${email}`, iss: origin, aud: audience, iat: now, exp: now + 3600, ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: KID, typ: 'JWT' })
        .sign(key)
    }
  return {
    issuer: origin,
    jwksUrl: `${origin}/jwks`,
    token: sign(real.privateKey),
    forge: sign(other.privateKey),
    fetches: () => fetches,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
