import type { DeliveryAttempt, DeliveryRecord, IntegrationRecord, SigningSecret } from '../../model/records.ts'
import { signatureHeaders, type SignatureHeaders } from './signing.ts'
import { redactReceiverUrl } from '../../logging/redact.ts'

/** The request of one attempt as the receiver got it: what the delivery debugger shows. */
export interface SignedRequest {
  method: 'POST'
  url: string
  headers: SignatureHeaders
  /** the exact body bytes, UTF-8 */
  body: string
}

/** Secrets that signed at `atMs`: created by then and not yet expired (signing.ts activeSecrets, at that time). */
function secretsAt(secrets: readonly SigningSecret[], atMs: number): SigningSecret[] {
  return secrets.filter((s) => Date.parse(s.created_at) <= atMs && (s.expires_at === null || Date.parse(s.expires_at) > atMs))
}

/**
 * The signed request of an attempt, derived again from stored data: deliver.ts signs with the
 * attempt's own clock reading (`at`, whose whole seconds are webhook-timestamp), the event id and
 * the stored body, with every secret active then. Nothing secret is in it (signatures are HMAC
 * outputs). The URL is the integration's current one, its query and userinfo redacted (a receiver's
 * credential often sits there: logging/redact.ts). Null when no stored secret was active then.
 */
export function signedRequestOf(integration: IntegrationRecord, delivery: DeliveryRecord, attempt: DeliveryAttempt): SignedRequest | null {
  const atMs = Date.parse(attempt.at)
  const secrets = secretsAt(integration.signing_secrets, atMs)
  // every secret that signed it is gone (rotated out since): nothing to derive it with. When only
  // some are gone, the signatures shown are fewer than were sent, and each still verifies.
  if (secrets.length === 0) return null
  return {
    method: 'POST',
    url: redactReceiverUrl(integration.url) ?? '',
    headers: signatureHeaders(
      secrets.map((s) => s.secret),
      delivery.event_id,
      atMs,
      delivery.body,
    ),
    body: delivery.body,
  }
}

/**
 * A Node script (node:crypto only) that checks the shown request's signature with the tenant's
 * secret, as a receiver must (docs/webhooks.md, "Verifying"). The values are embedded as JSON
 * string literals, which are valid JavaScript for any text. It skips the receiver's timestamp
 * tolerance check on purpose: the request shown is old.
 */
export function verifySnippet(request: SignedRequest): string {
  const lit = (s: string) => JSON.stringify(s)
  return `// node verify.mjs   (with WEBHOOK_SECRET=whsec_… from "Reveal secret" in the environment)
import { createHmac, timingSafeEqual } from 'node:crypto'

const secret = process.env.WEBHOOK_SECRET ?? ''
const id = ${lit(request.headers['webhook-id'])} // webhook-id
const timestamp = ${lit(request.headers['webhook-timestamp'])} // webhook-timestamp
const signatures = ${lit(request.headers['webhook-signature'])} // webhook-signature
const body = ${lit(request.body)} // the exact body bytes

// a receiver also refuses a timestamp more than 5 minutes from its clock; skipped here, this request is old
const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
const expected = createHmac('sha256', key).update(\`\${id}.\${timestamp}.\${body}\`).digest()
const verified = signatures.split(' ').some((entry) => {
  const [version, sig] = entry.split(',')
  const given = Buffer.from(sig ?? '', 'base64')
  return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected)
})
console.log(verified ? 'verified' : 'NOT verified')
process.exitCode = verified ? 0 : 1
`
}
