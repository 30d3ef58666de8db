/**
 * The `-dead-letter-alerts` pushes read attributes only (issue 31): a dead letter carries the whole
 * failed message, up to about 13 MB of base64, and decoding it per push let a dead-letter flood
 * exhaust the dispatcher's memory. The body is scanned as it arrives and `message.data` dropped
 * unread (shared/src/http/push-envelope-stream.ts). Proof that it is never read: a `data` that is
 * not even base64 still gets a 204 (decodePushEnvelope refuses it with 400 when it reads it).
 */
import { afterAll, describe, expect, it } from 'vitest'
import type { AddressInfo } from 'node:net'
import { scanPushEnvelopeWithoutData } from '@lsv/shared/http/push-envelope-stream.ts'
import { buildApp as buildDispatcher } from '../../services/webhook-dispatcher/src/app.ts'
import type { App } from '@lsv/shared/http/base-app.ts'
import { createTestDeps } from '../helpers/deps.ts'

const envelope = (data: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    data: 'top-level "data" is kept',
    message: {
      attributes: { data: 'an attribute named data is kept', 'x-dead-letter-reason': 'poison' },
      data,
      messageId: 'm-1',
      publishTime: '2026-09-04T12:00:00.000Z',
    },
    subscription: 'projects/p/subscriptions/contact-batches-dead-letter-alerts',
    ...extra,
  })

/** the scanner's output for `text` cut into chunks of `size` bytes */
function scanned(text: string, size: number): unknown {
  const scanner = scanPushEnvelopeWithoutData()
  const bytes = Buffer.from(text)
  for (let i = 0; i < bytes.length; i += size) scanner.write(bytes.subarray(i, i + size))
  return JSON.parse(scanner.end())
}

describe('a push envelope scanned without message.data', () => {
  it('drops only message.data, wherever the chunks are cut, escapes and look-alike keys included', () => {
    const text = envelope('ab\\"c}{,:\\\\[]"x')
    const expected = { ...(JSON.parse(text) as Record<string, unknown>) }
    ;(expected.message as Record<string, unknown>).data = ''
    // mutation: copy everything → data stays; cut only at the first chunk → a split quote breaks it
    for (const size of [1, 2, 3, 7, 64, text.length]) expect(scanned(text, size), `chunks of ${size}`).toEqual(expected)
  })
})

describe("the dispatcher's dead-letter alerts route", () => {
  let app: App
  let cleanup: () => Promise<void>
  afterAll(async () => {
    await app?.close()
    await cleanup?.()
  })

  it('acks a 12 MB dead letter whose data is never read (not base64 at all: 204, not 400); another push route still checks it', async () => {
    const deps = await createTestDeps()
    cleanup = () => deps.cleanup()
    app = await buildDispatcher(deps)
    await app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    const huge = '!'.repeat(12 * 1024 * 1024)
    const post = (path: string) => fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: envelope(huge) })
    // mutation: withoutData dropped from dead-letters-push.ts → decodePushEnvelope reads data → 400
    expect((await post('/pubsub/contact-batches-dead-letter')).status).toBe(204)
    // the same body on a route that reads its data is refused as before
    expect((await post('/pubsub/visit-events')).status).toBe(400)
    // a body that is not JSON is still refused
    const broken = await fetch(`${base}/pubsub/contact-batches-dead-letter`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"message":',
    })
    expect(broken.status).toBe(400)
  }, 60_000)
})
