import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pino from 'pino'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { PubSub } from '@google-cloud/pubsub'
import { createPubSubQueue } from '@lsv/shared/adapters/google/pubsub-queue.ts'
import { startUpsertWorkerBackground } from '../../services/upsert-worker/src/background.ts'
import { handleBatchMessage } from '../../services/upsert-worker/src/handle-batch.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { emulators, randomSuffix } from '../helpers/embedded.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { body, recordingQueue, record } from './support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

async function eventually<T>(read: () => Promise<T | null>, tries = 400): Promise<T | null> {
  for (let i = 0; i < tries; i++) {
    const v = await read()
    if (v) return v
    await new Promise((r) => setTimeout(r, 50))
  }
  return null
}

/** The same path against the Firestore and Pub/Sub emulators (the production adapters). */
describe.skipIf(!emulators.firestore || !emulators.pubsub)('ingestion against the emulators', () => {
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let t: StoredTenant
  let edge: Awaited<ReturnType<typeof buildEdge>>
  // parked 1 s into a 60 s window, so no window boundary falls inside a test
  const clock = new ManualClock(Math.floor(Date.now() / 60_000) * 60_000 + 1000)

  beforeAll(async () => {
    // topics are created on demand under a random prefix, so runs sharing an emulator never meet
    const queue = createPubSubQueue(new PubSub({ projectId: emulators.project }), {
      logger: pino({ level: 'silent' }),
      createMissing: true,
      namePrefix: `ing-${randomSuffix(4)}-`,
    })
    deps = await createTestDeps({ backend: 'emulators', queue, clock })
    t = await createTestTenant(deps, {
      webhook: {
        mappings: [
          { from: 'id', to: 'external_id' },
          { from: 'mail', to: 'email' },
        ],
      },
    })
    edge = await buildEdge(deps)
  })
  afterAll(async () => {
    await edge?.close()
    await t?.cleanup()
    await deps?.cleanup()
  })

  it('a push on the edge is queued on Pub/Sub and upserted into Firestore by the worker subscription', async () => {
    const worker = await startUpsertWorkerBackground(deps)
    try {
      const res = await edge.inject({ method: 'POST', url: '/v1/contacts', headers: t.keyHeaders(), payload: body([record(1), record(2, { title: 'T' })]) })
      expect(res.statusCode).toBe(202)
      const hook = await edge.inject({
        method: 'POST',
        url: `/v1/contacts/${t.webhook.id}`,
        headers: { host: t.host, 'x-webhook-token': t.sourceToken, 'content-type': 'application/json' },
        payload: body([{ id: 'w-1', mail: 'W@X.io' }]),
      })
      expect(hook.statusCode).toBe(202)
      expect(await eventually(() => deps.contacts.getByAnchor(t.account.id, 'crm', 'ext-2'))).toMatchObject({
        identity: { title: 'T' },
        business_email: 'person2@example.com',
      })
      expect(await eventually(() => deps.contacts.getByAnchor(t.account.id, 'hooks', 'w-1'))).toMatchObject({ business_email: 'w@x.io' })
    } finally {
      await worker.close()
    }
  })

  it('rate limits count in Firestore: 120 per 60 s per key', async () => {
    const x = await createTestTenant(deps)
    try {
      const codes: number[] = []
      for (let i = 0; i < 122; i++)
        codes.push((await edge.inject({ method: 'POST', url: '/v1/contacts', headers: x.keyHeaders(), payload: body([record(i)]) })).statusCode)
      expect(codes.slice(0, 120).every((c) => c === 202)).toBe(true)
      expect(codes.slice(120)).toEqual([429, 429])
      clock.advance(60_000)
      expect((await edge.inject({ method: 'POST', url: '/v1/contacts', headers: x.keyHeaders(), payload: body([record(1)]) })).statusCode).toBe(202)
    } finally {
      await x.cleanup()
    }
  })

  it('duplicate delivery into Firestore is idempotent', async () => {
    const q = recordingQueue()
    const producer = await createTestDeps({ backend: 'emulators', queue: q.queue, clock })
    const app = await buildEdge(producer)
    try {
      const res = await app.inject({ method: 'POST', url: '/v1/contacts', headers: t.keyHeaders(), payload: body([record(7), record(8)]) })
      expect(res.statusCode).toBe(202)
      const message = q.batches()[0]!
      const workerDeps = { ...producer, queue: q.queue }
      expect(await handleBatchMessage(workerDeps, message)).toBe('ack')
      const first = await producer.contacts.getByAnchor(t.account.id, 'crm', 'ext-7')
      expect(await handleBatchMessage(workerDeps, { ...message, deliveryAttempt: 2 })).toBe('ack')
      expect(await producer.contacts.getByAnchor(t.account.id, 'crm', 'ext-7')).toEqual(first)
      expect(first).toMatchObject({ business_email: 'person7@example.com', name_source: 'manual' })
    } finally {
      await app.close()
      await producer.cleanup()
    }
  })
})
