import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Webhook } from 'standardwebhooks'
import { signatureHeaders, signOnce } from '@lsv/shared/domain/webhooks/signing.ts'

/**
 * signing.ts is hand-written for speed (its header says why); the `standardwebhooks` package is
 * the reference. For random ids, timestamps, bodies and secrets both produce the same signature
 * header, and the package's Webhook.verify accepts what we send.
 */

/** A secret as tenants hold it: `whsec_` + base64 of 1..64 random bytes (or the bare base64). */
const secret = fc
  .tuple(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.boolean())
  .map(([bytes, prefixed]) => `${prefixed ? 'whsec_' : ''}${Buffer.from(bytes).toString('base64')}`)
/** any text, including astral characters and lone surrogates (both sides encode them as UTF-8 U+FFFD) */
const body = fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.json(), fc.string({ unit: 'grapheme', maxLength: 300 }))
const id = fc.oneof(
  fc.uuid().map((u) => `evt_${u}`),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
)
/** whole seconds from 1970 to year ~2500, as an instant in milliseconds (the sub-second part is dropped by both) */
const instantMs = fc.integer({ min: 0, max: 16_725_225_600_000 })

describe('signing.ts against the standardwebhooks package', () => {
  it('the same signature for random ids, timestamps, bodies and secrets', () => {
    fc.assert(
      fc.property(secret, id, instantMs, body, (s, msgId, ms, text) => {
        const reference = new Webhook(s).sign(msgId, new Date(ms), text)
        expect(signOnce(s, msgId, Math.floor(ms / 1000), text)).toBe(reference)
        expect(signOnce(s, msgId, Math.floor(ms / 1000), Buffer.from(text))).toBe(reference)
        const headers = signatureHeaders([s], msgId, ms, text)
        // the headers sign the id they send (the event id, or its derived form: docs/webhooks.md, "Message ids")
        const sent = new Webhook(s).sign(headers['webhook-id'], new Date(ms), text)
        expect(headers['webhook-signature']).toBe(sent)
        expect(headers['x-service-signature']).toBe(sent)
        expect(headers['webhook-timestamp']).toBe(String(Math.floor(ms / 1000)))
      }),
      { numRuns: 2000 },
    )
  })

  it('Webhook.verify accepts our headers, for each secret of a rotation, and refuses a changed body', () => {
    // verify checks the timestamp against the real clock (5 minutes either way): sign near now
    fc.assert(
      fc.property(fc.array(secret, { minLength: 1, maxLength: 3 }), id, fc.integer({ min: -240_000, max: 240_000 }), body, (secrets, msgId, offset, text) => {
        const headers = signatureHeaders(secrets, msgId, Date.now() + offset, text) as unknown as Record<string, string>
        expect(headers['webhook-signature']!.split(' ')).toHaveLength(secrets.length)
        for (const s of secrets) expect(() => new Webhook(s).verify(text, headers, { jsonParse: false }), s).not.toThrow()
        expect(() => new Webhook(secrets[0]!).verify(`${text}.`, headers, { jsonParse: false })).toThrow()
      }),
      { numRuns: 500 },
    )
  })
})
