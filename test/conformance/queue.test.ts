import { execFile, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import pino from 'pino'
import { PubSub, type Message } from '@google-cloud/pubsub'
import { systemClock } from '@lsv/shared/model/clock.ts'
import { openEmbeddedDb, type EmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { buildBaseApp } from '@lsv/shared/http/base-app.ts'
import type { QueueMessage } from '@lsv/shared/ports/queue.ts'
import type { Topic } from '@lsv/shared/model/topics.ts'
import { createEmbeddedQueue, type EmbeddedQueueOptions } from '@lsv/shared/adapters/embedded/queue.ts'
import { createPubSubQueue } from '@lsv/shared/adapters/google/pubsub-queue.ts'
import { decodePushEnvelope, registerPushEndpoint } from '@lsv/shared/http/pubsub-push.ts'
import { AppError } from '@lsv/shared/errors/app-error.ts'
import { pushCallers } from '@lsv/shared/http/internal-callers.ts'
import { randomSuffix, tempDataDir } from '../helpers/embedded.ts'
import { queueConformance, type ReadDeadLetter } from './suites/queue.ts'
import { sleep, waitFor } from './suites/wait.ts'

const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' })
/** fast timings so nack backoff and polling do not slow the suite */
const FAST: Omit<EmbeddedQueueOptions, 'clock' | 'logger'> = { pollIntervalMs: 20, nackBackoffMs: 10 }

describe('queue: embedded (node:sqlite)', () => {
  queueConformance(async () => {
    const dir = tempDataDir()
    const db = openEmbeddedDb(dir.dir)
    const queue = createEmbeddedQueue(db, { clock: systemClock, logger, ...FAST })
    return {
      queue,
      deadLetters: (topic) => queue.readDeadLetters(topic),
      async close() {
        await queue.close()
        db.close()
        dir.cleanup()
      },
    }
  })

  describe('embedded only', () => {
    const cleanups: Array<() => Promise<void> | void> = []
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c()
    })
    const folder = () => {
      const dir = tempDataDir()
      cleanups.push(() => dir.cleanup())
      return dir.dir
    }
    const adapter = (dir: string, extra: Partial<EmbeddedQueueOptions> = {}) => {
      const db: EmbeddedDb = openEmbeddedDb(dir)
      const queue = createEmbeddedQueue(db, { clock: systemClock, logger, ...FAST, ...extra })
      cleanups.push(async () => {
        await queue.close()
        db.close()
      })
      return queue
    }

    it('keeps a message whose publish resolved even when the process is SIGKILLed right after', async () => {
      const dir = folder()
      const fixture = fileURLToPath(new URL('./fixtures/publish-then-crash.ts', import.meta.url))
      const node = fileURLToPath(new URL('../../node_modules/.bin/node', import.meta.url))
      const { id, signal } = await new Promise<{ id: string; signal: string | null }>((resolve, reject) => {
        const child = execFile(node, [fixture, dir, 'survives-the-crash'], (err, stdout, stderr) => {
          const killed = (err as { signal?: string } | null)?.signal ?? null
          if (!stdout.trim()) reject(new Error(`fixture printed nothing: ${stderr}`))
          else resolve({ id: stdout.trim(), signal: killed })
        })
        child.on('error', reject)
      })
      expect(signal).toBe('SIGKILL')

      const queue = adapter(dir)
      const got: QueueMessage[] = []
      const sub = await queue.subscribe('contact-batches', async (m) => {
        got.push(m)
        return 'ack'
      })
      const message = await waitFor(() => got[0], 'delivery after crash')
      await sub.close()
      expect(message.id).toBe(id)
      expect(message.data.toString()).toBe('survives-the-crash')
      expect(message.attributes).toEqual({ origin: 'crash-fixture' })
    })

    it('never hands one message to two subscribers on the same file (separate connections)', async () => {
      const dir = folder()
      const a = adapter(dir)
      const b = adapter(dir)
      const handled: string[] = []
      const handler = async (m: QueueMessage) => {
        handled.push(m.id)
        await sleep(5)
        return 'ack' as const
      }
      const subA = await a.subscribe('visit-events', handler, { maxInFlight: 3 })
      const subB = await b.subscribe('visit-events', handler, { maxInFlight: 3 })
      const ids: string[] = []
      for (let i = 0; i < 30; i++) ids.push(await (i % 2 ? a : b).publish('visit-events', Buffer.from(String(i))))
      await waitFor(() => new Set(handled).size === ids.length, 'all handled')
      await subA.close()
      await subB.close()
      expect(handled.sort()).toEqual(ids.sort())
    })

    it('never hands one message to two consumer processes on the same file', async () => {
      const dir = folder()
      const fixture = fileURLToPath(new URL('./fixtures/consume-and-print.ts', import.meta.url))
      const node = fileURLToPath(new URL('../../node_modules/.bin/node', import.meta.url))
      const outputs = [0, 1].map(() => {
        const child = spawn(node, [fixture, dir], { stdio: ['ignore', 'pipe', 'inherit'] })
        const out = { child, text: '' }
        child.stdout.on('data', (chunk: Buffer) => (out.text += chunk.toString()))
        cleanups.push(() => void child.kill('SIGKILL'))
        return out
      })
      await waitFor(() => {
        if (outputs.some((o) => o.child.exitCode !== null)) throw new Error('a consumer process died')
        return outputs.every((o) => o.text.includes('ready\n'))
      }, 'consumers ready')
      const queue = adapter(dir)
      const ids: string[] = []
      for (let i = 0; i < 40; i++) ids.push(await queue.publish('visit-events', Buffer.from(String(i))))
      const handled = () => outputs.flatMap((o) => o.text.split('\n').filter((l) => l && l !== 'ready'))
      await waitFor(() => new Set(handled()).size === ids.length, 'all handled by the children')
      await Promise.all(
        outputs.map(
          (o) =>
            new Promise((r) => {
              o.child.once('exit', r)
              o.child.kill('SIGTERM')
            }),
        ),
      )
      expect(handled().sort()).toEqual([...ids].sort())
    })

    it('renews the lease while a slow handler runs, so the message is not redelivered mid-way', async () => {
      const dir = folder()
      const a = adapter(dir, { leaseMs: 300 })
      const b = adapter(dir, { leaseMs: 300 })
      const deliveries: Array<{ by: string; attempt: number }> = []
      let done = false
      const slow = (by: string) => async (m: QueueMessage) => {
        deliveries.push({ by, attempt: m.deliveryAttempt })
        await sleep(1200) // four lease lengths
        done = true
        return 'ack' as const
      }
      const subA = await a.subscribe('contact-changes', slow('a'))
      const subB = await b.subscribe('contact-changes', slow('b'))
      await a.publish('contact-changes', Buffer.from('long batch'))
      await waitFor(() => done, 'slow handler')
      await subA.close()
      await subB.close()
      expect(deliveries).toHaveLength(1)
      expect(deliveries[0]!.attempt).toBe(1)
    })

    it('keeps dead letters readable with their attempt count, apart from the live topic', async () => {
      const queue = adapter(folder())
      await queue.publish('contact-batches', Buffer.from('bad'), { k: 'v' })
      const sub = await queue.subscribe('contact-batches', async () => 'nack', { maxDeliveryAttempts: 2 })
      const dead = await waitFor(async () => {
        const letters = await queue.readDeadLetters('contact-batches')
        return letters.length ? letters : undefined
      }, 'dead letter')
      await sub.close()
      expect(dead[0]).toMatchObject({ deliveryAttempts: 2, attributes: { k: 'v' } })
      expect(dead[0]!.data.toString()).toBe('bad')
      expect(await queue.readDeadLetters('visit-events')).toEqual([])
    })
  })
})

describe.skipIf(!process.env.PUBSUB_EMULATOR_HOST)('queue: Pub/Sub emulator', () => {
  queueConformance(async () => {
    const pubsub = new PubSub({ projectId: process.env.EMULATOR_PROJECT ?? 'demo-lsv-test' })
    const namePrefix = `t${randomSuffix()}-`
    const queue = createPubSubQueue(pubsub, { logger, createMissing: true, namePrefix })
    const dead = new Map<string, ReadDeadLetter[]>()
    const readers: Array<import('@google-cloud/pubsub').Subscription> = []
    return {
      queue,
      async unreachable() {
        // nothing listens on the discard port: the client fails to connect (UNAVAILABLE)
        const nowhere = new PubSub({ projectId: process.env.EMULATOR_PROJECT ?? 'demo-lsv-test', apiEndpoint: '127.0.0.1:9' })
        const gone = createPubSubQueue(nowhere, { logger, namePrefix })
        return { ...gone, close: () => gone.close().finally(() => nowhere.close()) }
      },
      async deadLetters(topic: Topic) {
        if (!dead.has(topic)) {
          const letters: ReadDeadLetter[] = []
          dead.set(topic, letters)
          const reader = pubsub.subscription(`${namePrefix}${topic}-dead-letter-sub`)
          reader.on('message', (m: Message) => {
            letters.push({ data: m.data, attributes: { ...m.attributes } })
            m.ack()
          })
          readers.push(reader)
        }
        return dead.get(topic)!
      },
      async close() {
        await queue.close()
        await Promise.all(readers.map((r) => r.close()))
        const [subs] = await pubsub.getSubscriptions()
        await Promise.all(subs.filter((s) => s.name.includes(`/subscriptions/${namePrefix}`)).map((s) => s.delete().catch(() => {})))
        const [topics] = await pubsub.getTopics()
        await Promise.all(topics.filter((t) => t.name.includes(`/topics/${namePrefix}`)).map((t) => t.delete().catch(() => {})))
        await pubsub.close()
      },
    }
  })
})

describe.skipIf(!process.env.PUBSUB_EMULATOR_HOST)('queue: Pub/Sub emulator, adapter specifics', () => {
  it('rejects a publish the service does not accept (here: topic missing, createMissing off)', async () => {
    const pubsub = new PubSub({ projectId: process.env.EMULATOR_PROJECT ?? 'demo-lsv-test' })
    const queue = createPubSubQueue(pubsub, { logger, namePrefix: `missing${randomSuffix()}-` })
    await expect(queue.publish('contact-batches', Buffer.from('x'))).rejects.toMatchObject({ code: 5 })
    await queue.close()
    await pubsub.close()
  })

  it('consumes from the subscription named <topic>-<subscriptionSuffix>', async () => {
    const pubsub = new PubSub({ projectId: process.env.EMULATOR_PROJECT ?? 'demo-lsv-test' })
    const namePrefix = `sfx${randomSuffix()}-`
    const queue = createPubSubQueue(pubsub, { logger, createMissing: true, namePrefix, subscriptionSuffix: 'upsert' })
    try {
      await queue.publish('visit-events', Buffer.from('v'))
      const [exists] = await pubsub.subscription(`${namePrefix}visit-events-upsert`).exists()
      expect(exists).toBe(true)
      const got: string[] = []
      const sub = await queue.subscribe('visit-events', async (m) => {
        got.push(m.data.toString())
        return 'ack'
      })
      await waitFor(() => got.length === 1, 'delivery')
      await sub.close()
      expect(got).toEqual(['v'])
    } finally {
      await queue.close()
      for (const s of ['visit-events-upsert', 'visit-events-dead-letter-upsert'])
        await pubsub
          .subscription(namePrefix + s)
          .delete()
          .catch(() => {})
      for (const t of ['visit-events', 'visit-events-dead-letter'])
        await pubsub
          .topic(namePrefix + t)
          .delete()
          .catch(() => {})
      await pubsub.close()
    }
  })
})

describe('queue: Pub/Sub push endpoint', () => {
  const envelope = (overrides: Record<string, unknown> = {}, message: Record<string, unknown> = {}) => ({
    message: {
      data: Buffer.from('{"x":1}').toString('base64'),
      attributes: { account_id: 'acc-1' },
      messageId: '1234',
      publishTime: '2026-09-04T12:00:00.123Z',
      ...message,
    },
    subscription: 'projects/p/subscriptions/contact-batches-push',
    ...overrides,
  })

  it('decodes an envelope into a QueueMessage', () => {
    expect(decodePushEnvelope(envelope({ deliveryAttempt: 3 }))).toEqual({
      id: '1234',
      data: Buffer.from('{"x":1}'),
      attributes: { account_id: 'acc-1' },
      deliveryAttempt: 3,
      publishedAt: '2026-09-04T12:00:00.123Z',
    })
    const bare = decodePushEnvelope(envelope({}, { attributes: undefined, data: undefined }))
    expect(bare.deliveryAttempt).toBe(1)
    expect(bare.data.length).toBe(0)
    expect(bare.attributes).toEqual({})
  })

  it.each([
    ['not an object', 'x'],
    ['no message', { subscription: 's' }],
    ['no subscription', { message: envelope().message }],
    ['data not base64', envelope({}, { data: '@@@' })],
    ['no messageId', envelope({}, { messageId: undefined })],
    ['bad publishTime', envelope({}, { publishTime: 'yesterday' })],
    ['non-string attribute', envelope({}, { attributes: { n: 1 } })],
    ['bad deliveryAttempt', envelope({ deliveryAttempt: 0 })],
  ])('rejects an envelope with %s as invalid_payload', (_label, body) => {
    let caught: unknown
    try {
      decodePushEnvelope(body)
    } catch (err) {
      caught = err
    }
    expect(caught).toBeInstanceOf(AppError)
    expect((caught as AppError).code).toBe('invalid_payload')
  })

  const appWith = (handler: (m: QueueMessage) => Promise<'ack' | 'nack'>, options: Parameters<typeof registerPushEndpoint>[3]) => {
    const app = buildBaseApp({ logger })
    registerPushEndpoint(app, '/push/contact-batches', handler, options)
    return app
  }

  it('answers 204 on ack, 503 on nack or throw, 400 on a malformed envelope', async () => {
    const seen: QueueMessage[] = []
    let result: 'ack' | 'nack' | 'throw' = 'ack'
    const app = appWith(
      async (m) => {
        seen.push(m)
        if (result === 'throw') throw new Error('boom')
        return result
      },
      {
        callers: {
          identity: null,
          verify: async () => {
            throw new Error('no token expected')
          },
        },
      },
    )
    const post = (payload: unknown) => app.inject({ method: 'POST', url: '/push/contact-batches', payload: payload as object })
    expect((await post(envelope())).statusCode).toBe(204)
    expect(seen[0]!.data.toString()).toBe('{"x":1}')
    result = 'nack'
    expect((await post(envelope())).statusCode).toBe(503)
    result = 'throw'
    const thrown = await post(envelope())
    expect(thrown.statusCode).toBe(503)
    expect(thrown.body).not.toContain('boom')
    expect((await post({ message: {} })).statusCode).toBe(400)
    expect(seen).toHaveLength(3)
    await app.close()
  })

  it('checks the OIDC bearer token against the audience and identity before running the handler', async () => {
    const calls: Array<[string, string, string]> = []
    let handled = 0
    const app = appWith(
      async () => {
        handled++
        return 'ack'
      },
      {
        callers: {
          identity: { audience: 'https://worker.example/push', email: 'pubsub-push@p.iam.gserviceaccount.com' },
          verify: async (token, expected) => {
            calls.push([token, expected.audience, expected.email])
            if (token !== 'good-token') throw new Error('bad signature')
          },
        },
      },
    )
    const post = (authorization?: string) =>
      app.inject({
        method: 'POST',
        url: '/push/contact-batches',
        payload: envelope(),
        headers: authorization ? { authorization } : {},
      })
    expect((await post()).statusCode).toBe(401)
    expect((await post('Bearer forged')).statusCode).toBe(401)
    expect(handled).toBe(0)
    expect((await post('Bearer good-token')).statusCode).toBe(204)
    expect(handled).toBe(1)
    const who = ['https://worker.example/push', 'pubsub-push@p.iam.gserviceaccount.com']
    expect(calls).toEqual([
      ['forged', ...who],
      ['good-token', ...who],
    ])
    await app.close()
  })

  it('rejects an unverifiable token with the default verifier (Google issuer)', async () => {
    const app = appWith(async () => 'ack', {
      callers: pushCallers({ pushAudience: 'https://worker.example/push', pushServiceAccount: 'pubsub-push@p.iam.gserviceaccount.com', oidc: null }),
    })
    const res = await app.inject({
      method: 'POST',
      url: '/push/contact-batches',
      payload: envelope(),
      headers: { authorization: 'Bearer not.a.jwt' },
    })
    expect(res.statusCode).toBe(401)
    await app.close()
  })
})
