/**
 * The verifier of internal-route ID tokens behind Cloud Run's front end (shared/src/http/oidc.ts):
 * a token whose signature the front end replaced by SIGNATURE_REMOVED_BY_GOOGLE is accepted only
 * with INTERNAL_AUTH=front-end, and then only with the claims a signed token needs; a signed token
 * is verified cryptographically in both modes. Tokens come from a local issuer on loopback and are
 * stripped by scripts/lib/cloud/front-end.ts, the code that plays the front end in start:cloud.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { JWTPayload } from 'jose'
import { ConfigError, loadConfig } from '@lsv/shared/config/config.ts'
import { createOidcVerifier, isSignatureRemoved, oidcVerifierFor, SIGNATURE_REMOVED, type IdTokenVerifier } from '@lsv/shared/http/oidc.ts'
import { forwardedAuthorization, stripSignature } from '../../scripts/lib/cloud/front-end.ts'
import { createIam } from '../../scripts/lib/cloud/iam.ts'
import { startLocalIssuer, type LocalIssuer } from '../deploy/support/issuer.ts'

const PUSH_SA = `pubsub-push-${crypto.randomUUID().slice(0, 8)}@lsv-test.iam.gserviceaccount.com`
const AUDIENCE = `https://upsert-worker-${crypto.randomUUID().slice(0, 8)}.europe-west1.run.app`
const EXPECTED = { audience: AUDIENCE, email: PUSH_SA }
const now = () => Math.floor(Date.now() / 1000)
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

let issuer: LocalIssuer
let frontEnd: IdTokenVerifier
let verifying: IdTokenVerifier

beforeAll(async () => {
  issuer = await startLocalIssuer()
  frontEnd = createOidcVerifier({ issuers: [issuer.issuer], jwksUrl: issuer.jwksUrl, frontEnd: true })
  verifying = createOidcVerifier({ issuers: [issuer.issuer], jwksUrl: issuer.jwksUrl })
})
afterAll(async () => {
  await issuer?.close()
})

/** a token as the container receives it behind the front end */
const stripped = async (claims: JWTPayload = {}, email = PUSH_SA, audience = AUDIENCE) => stripSignature(await issuer.token(email, audience, claims))
/** header and payload written by hand, "signature" stripped: what only a forger could send */
const handMade = (header: Record<string, unknown>, payload: Record<string, unknown>) => `${b64(header)}.${b64(payload)}.${SIGNATURE_REMOVED}`
const goodPayload = () => ({ iss: issuer.issuer, aud: AUDIENCE, email: PUSH_SA, email_verified: true, iat: now(), exp: now() + 3600, sub: '1' })

describe('INTERNAL_AUTH=front-end: a signature-stripped token', () => {
  it('is accepted with the right issuer, audience, email, email_verified and expiry', async () => {
    const token = await stripped()
    expect(token.split('.')[2]).toBe('SIGNATURE_REMOVED_BY_GOOGLE')
    expect(isSignatureRemoved(token)).toBe(true)
    // mutation: verifying a stripped token's signature in front-end mode → rejects (no key matches)
    await expect(frontEnd(token, EXPECTED)).resolves.toBeUndefined()
    // an array audience naming ours, as jwtVerify admits for a signed token
    await expect(frontEnd(await stripped({ aud: ['https://other.example', AUDIENCE] }), EXPECTED)).resolves.toBeUndefined()
    // expiry within the 30 s skew still passes, as for a signed token
    await expect(frontEnd(await stripped({ exp: now() - 10 }), EXPECTED)).resolves.toBeUndefined()
    // a hand-made one with every claim right passes too: the front end, not the container, checked its origin
    await expect(frontEnd(handMade({ alg: 'RS256', kid: 'x' }, goodPayload()), EXPECTED)).resolves.toBeUndefined()
  })

  // each mutation named is the check in oidc.ts's strippedClaims (or the identity checks after it) removed
  const refusals: Array<[string, () => Promise<string>, RegExp]> = [
    ['another audience (mutation: no aud check)', () => stripped({}, PUSH_SA, 'https://webhook-dispatcher.example'), /"aud"/],
    ['another service account (mutation: no email check)', () => stripped({}, 'tasks-invoker@lsv-test.iam.gserviceaccount.com'), /another identity/],
    ['expired beyond the skew (mutation: no exp check, or skew widened)', () => stripped({ iat: now() - 7200, exp: now() - 60 }), /"exp"/],
    ['email_verified false (mutation: no email_verified check)', () => stripped({ email_verified: false }), /not verified/],
    ['email_verified missing', () => Promise.resolve(handMade({ alg: 'RS256' }, { ...goodPayload(), email_verified: undefined })), /not verified/],
    [
      'no email (mutation: "email" not a required claim)',
      () => Promise.resolve(handMade({ alg: 'RS256' }, { ...goodPayload(), email: undefined })),
      /missing required "email" claim/,
    ],
    ['another issuer (mutation: no iss check)', () => stripped({ iss: 'https://accounts.google.com' }), /"iss"/],
    ['alg none (mutation: no alg check)', () => Promise.resolve(handMade({ alg: 'none' }, goodPayload())), /alg "none" is not RS256/],
    ['alg HS256', () => Promise.resolve(handMade({ alg: 'HS256' }, goodPayload())), /not RS256/],
    ['no alg', () => Promise.resolve(handMade({ typ: 'JWT' }, goodPayload())), /not RS256/],
    ['no exp (mutation: required claims not checked)', () => Promise.resolve(handMade({ alg: 'RS256' }, { ...goodPayload(), exp: undefined })), /"exp"/],
    ['exp not a number', () => Promise.resolve(handMade({ alg: 'RS256' }, { ...goodPayload(), exp: String(now() + 3600) })), /"exp"/],
    ['no iat', () => Promise.resolve(handMade({ alg: 'RS256' }, { ...goodPayload(), iat: undefined })), /"iat"/],
    ['nbf ahead of the skew', () => Promise.resolve(handMade({ alg: 'RS256' }, { ...goodPayload(), nbf: now() + 600 })), /"nbf"/],
    ['no aud', () => Promise.resolve(handMade({ alg: 'RS256' }, { ...goodPayload(), aud: undefined })), /"aud"/],
    ['payload not JSON', () => Promise.resolve(`${b64({ alg: 'RS256' })}.bm90LWpzb24.${SIGNATURE_REMOVED}`), /.+/],
  ]
  it.each(refusals)('is refused: %s', async (_label, make, reason) => {
    await expect(frontEnd(await make(), EXPECTED)).rejects.toThrow(reason)
  })
})

describe('INTERNAL_AUTH=front-end: a signed token is still verified', () => {
  it('accepts a good signature and refuses a forged one (mutation: skip jwtVerify in front-end mode → forged accepted)', async () => {
    await expect(frontEnd(await issuer.token(PUSH_SA, AUDIENCE), EXPECTED)).resolves.toBeUndefined()
    await expect(frontEnd(await issuer.forge(PUSH_SA, AUDIENCE), EXPECTED)).rejects.toThrow(/signature/)
    // alg none with an empty signature is not "stripped": jwtVerify refuses it
    await expect(frontEnd(`${b64({ alg: 'none' })}.${b64(goodPayload())}.`, EXPECTED)).rejects.toThrow()
    // a look-alike marker is a (bad) signature, not a stripped one
    const token = await issuer.token(PUSH_SA, AUDIENCE)
    const lookAlike = `${token.split('.').slice(0, 2).join('.')}.${SIGNATURE_REMOVED}x`
    expect(isSignatureRemoved(lookAlike)).toBe(false)
    await expect(frontEnd(lookAlike, EXPECTED)).rejects.toThrow()
  })
})

describe('INTERNAL_AUTH=verify (the default): the service checks every signature itself', () => {
  it('refuses a stripped token however good its claims (mutation: accept stripped tokens without frontEnd → resolves)', async () => {
    await expect(verifying(await stripped(), EXPECTED)).rejects.toThrow(/INTERNAL_AUTH=verify/)
    await expect(verifying(await issuer.token(PUSH_SA, AUDIENCE), EXPECTED)).resolves.toBeUndefined()
  })

  it('oidcVerifierFor: front-end only when the configuration says so; unset is verify', async () => {
    const oidc = { issuer: issuer.issuer, jwksUrl: issuer.jwksUrl }
    const token = await stripped()
    await expect(oidcVerifierFor({ oidc })(token, EXPECTED)).rejects.toThrow(/INTERNAL_AUTH=verify/)
    await expect(oidcVerifierFor({ oidc, internalAuth: 'verify' })(token, EXPECTED)).rejects.toThrow(/INTERNAL_AUTH=verify/)
    await expect(oidcVerifierFor({ oidc, internalAuth: 'front-end' })(token, EXPECTED)).resolves.toBeUndefined()
    // the two modes never share a cached verifier
    expect(oidcVerifierFor({ oidc, internalAuth: 'front-end' })).not.toBe(oidcVerifierFor({ oidc }))
  })
})

describe('INTERNAL_AUTH in the configuration', () => {
  const SECRET = 'x'.repeat(43)
  const configError = (env: Record<string, string>) => {
    try {
      loadConfig(env)
      return null
    } catch (err) {
      if (err instanceof ConfigError) return err
      throw err
    }
  }

  it('defaults to verify; front-end only on Cloud Run (K_SERVICE) or with LOCAL_WIRING=true (mutation: drop the rule → accepted)', () => {
    expect(loadConfig({}).internalAuth).toBe('verify')
    const bare = configError({ INTERNAL_AUTH: 'front-end' })
    expect({ variable: bare?.variable, message: bare?.message }).toEqual({ variable: 'INTERNAL_AUTH', message: expect.stringContaining('K_SERVICE') })
    expect(configError({ INTERNAL_AUTH: 'front-end', NODE_ENV: 'test' })?.variable).toBe('INTERNAL_AUTH')
    expect(loadConfig({ INTERNAL_AUTH: 'front-end', K_SERVICE: 'upsert-worker' }).internalAuth).toBe('front-end')
    expect(loadConfig({ INTERNAL_AUTH: 'front-end', LOCAL_WIRING: 'true', LOCAL_FRONT_END_SECRET: SECRET }).internalAuth).toBe('front-end')
    expect(configError({ INTERNAL_AUTH: 'trust' })?.variable).toBe('INTERNAL_AUTH')
  })

  it("on this machine front-end needs the played front end's secret; production refuses the secret without LOCAL_WIRING", () => {
    // mutation: drop the rule → start:cloud's services would accept a stripped token from any local process
    const missing = configError({ INTERNAL_AUTH: 'front-end', LOCAL_WIRING: 'true' })
    expect({ variable: missing?.variable, message: missing?.message }).toEqual({
      variable: 'LOCAL_FRONT_END_SECRET',
      message: expect.stringContaining('any process on this machine'),
    })
    expect(loadConfig({ INTERNAL_AUTH: 'front-end', LOCAL_WIRING: 'true', LOCAL_FRONT_END_SECRET: SECRET }).localFrontEndSecret).toBe(SECRET)
    // a service without internal routes has no front end to play
    expect(loadConfig({ INTERNAL_AUTH: 'front-end', LOCAL_WIRING: 'true' }, 'edge-ingest').localFrontEndSecret).toBeNull()
    expect(configError({ NODE_ENV: 'production', LOCAL_FRONT_END_SECRET: SECRET })?.variable).toBe('LOCAL_FRONT_END_SECRET')
  })
})

describe("the front end's stand-in (scripts/lib/cloud/front-end.ts)", () => {
  it('strips the signature for a service that requires authentication, not for a public one or another URL', async () => {
    const iam = createIam([
      { member: `serviceAccount:${PUSH_SA}`, role: 'roles/run.invoker', resource: 'run:upsert-worker' },
      { member: 'allUsers', role: 'roles/run.invoker', resource: 'run:edge-ingest' },
    ])
    const token = await issuer.token(PUSH_SA, AUDIENCE)
    const [header, payload] = token.split('.')
    expect(forwardedAuthorization(iam, 'upsert-worker', token)).toBe(`Bearer ${header}.${payload}.SIGNATURE_REMOVED_BY_GOOGLE`)
    expect(forwardedAuthorization(iam, 'edge-ingest', token)).toBe(`Bearer ${token}`)
    expect(forwardedAuthorization(iam, null, token)).toBe(`Bearer ${token}`)
    expect(() => stripSignature('not-a-jwt')).toThrow()
  })
})
