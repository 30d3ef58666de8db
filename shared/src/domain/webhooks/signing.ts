import { createHash, createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { SigningSecret } from '../../model/records.ts'

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256 over
 * `<id>.<timestamp>.<body>` with the base64 key of a `whsec_` secret, sent as `v1,<base64>`;
 * during a secret rotation several signatures are sent space-separated. The same value goes in
 * the contract's `X-Service-Signature` and the standard `webhook-signature` header, so the
 * `standardwebhooks` package verifies our deliveries.
 *
 * Written here rather than calling that package's Webhook.sign (as svix's client does) because
 * signing is on every delivery's path: node:crypto's native HMAC with the KeyObject imported once
 * per secret (keyCache) against the package's pure-JS SHA-256 (@stablelib) and a base64 decode of
 * the secret per Webhook instance; signing 20 000 bodies of 1.5 KB in one process took 3 to 5
 * times as long through the package. The output is the package's to the byte:
 * test/outbound/signing-standardwebhooks.test.ts compares both on random ids, timestamps, bodies
 * and secrets, and verifies ours with Webhook.verify.
 */

const SECRET_PREFIX = 'whsec_'
/** KeyObjects created once per secret: importing the key is the costly part of an HMAC. */
const keyCache = new LRUCache<string, KeyObject>({ max: 10_000 })

export function generateSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`
}

export function signingKeyOf(secret: string): KeyObject {
  let key = keyCache.get(secret)
  if (!key) {
    const raw = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret
    key = createSecretKey(Buffer.from(raw, 'base64'))
    keyCache.set(secret, key)
  }
  return key
}

export function signOnce(secret: string, id: string, timestampSeconds: number, body: string | Buffer): string {
  const h = createHmac('sha256', signingKeyOf(secret))
  h.update(`${id}.${timestampSeconds}.`)
  h.update(body)
  return `v1,${h.digest('base64')}`
}

/**
 * The answer of activeSecrets for one frozen list (a cached integration's: the tenant lookup cache
 * freezes what it keeps), from `from` until `until` (the next expiry among them): every delivery
 * to an endpoint reads the same list, and the answer changes only when one of them expires.
 */
const activeOf = new WeakMap<readonly SigningSecret[], { from: number; until: number; secrets: readonly string[] }>()

/** Secrets still signing at `nowMs`: the current one and any previous one inside its rotation grace. */
export function activeSecrets(secrets: readonly SigningSecret[], nowMs: number): readonly string[] {
  const known = activeOf.get(secrets)
  if (known && nowMs >= known.from && nowMs < known.until) return known.secrets
  let until = Number.POSITIVE_INFINITY
  const active: string[] = []
  for (const s of secrets) {
    const expires = s.expires_at === null ? Number.POSITIVE_INFINITY : Date.parse(s.expires_at)
    if (!(expires > nowMs)) continue
    active.push(s.secret)
    until = Math.min(until, expires)
  }
  // a list that can still change (not a cached record's) is read afresh each time
  if (Object.isFrozen(secrets) && secrets.every(Object.isFrozen)) activeOf.set(secrets, { from: nowMs, until, secrets: Object.freeze(active) })
  return active
}

export interface SignatureHeaders {
  'webhook-id': string
  'webhook-timestamp': string
  'webhook-signature': string
  'x-service-signature': string
  'x-service-idempotency-key': string
}

/** Derived message ids start with this; an event id that does too is derived, so the two kinds never meet. */
const DERIVED_ID_PREFIX = 'msg_sha256_'
/** printable ASCII without space and `.`: sent as it is */
const SAFE_MESSAGE_ID = /^[\x21-\x2d\x2f-\x7e]+$/

/**
 * The Standard Webhooks `webhook-id` for an event id (docs/webhooks.md, "Message ids"). The
 * signed content is `<id>.<timestamp>.<body>`, so an id with `.` is ambiguous, and a header value
 * outside printable ASCII (or with spaces, which HTTP trims) is not read back as sent. Such an id
 * (visit ids are any 1..256 characters) becomes `msg_sha256_` + base64url(SHA-256 of its UTF-8):
 * stable across retries, distinct per event id. Every other id is sent as it is. The contract's
 * `X-Service-Idempotency-Key` and the body `id` always carry the event id itself.
 */
function webhookMessageId(eventId: string): string {
  if (SAFE_MESSAGE_ID.test(eventId) && !eventId.startsWith(DERIVED_ID_PREFIX)) return eventId
  return `${DERIVED_ID_PREFIX}${createHash('sha256').update(eventId, 'utf8').digest('base64url')}`
}

export function signatureHeaders(secrets: readonly string[], id: string, nowMs: number, body: string | Buffer): SignatureHeaders {
  const ts = Math.floor(nowMs / 1000)
  const messageId = webhookMessageId(id)
  const signature = secrets.map((s) => signOnce(s, messageId, ts, body)).join(' ')
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(ts),
    'webhook-signature': signature,
    'x-service-signature': signature,
    'x-service-idempotency-key': id,
  }
}
