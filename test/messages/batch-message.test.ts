import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pino from 'pino'
import type { App } from '@lsv/shared/http/base-app.ts'
import { BatchMessageAttributes } from '@lsv/shared/contract/messages.ts'
import { messageCheck } from '@lsv/shared/contract/message-check.ts'
import { batchAttributes, decodeBatchMessage, newBatchMeta } from '@lsv/shared/domain/ingest/batch-message.ts'
import { buildApp as buildWorker } from '../../services/upsert-worker/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { recordingQueue } from '../ingest/support/harness.ts'

/**
 * A `contact-batches` message carries its format in attributes (BatchMessageAttributes,
 * contract/messages.ts, `v` = 1). One of another version or with attributes that do not hold
 * is refused on consume, as the worker's poison-message policy says: logged, parked on the
 * dead-letter topic as it came, and acked (204 to the push subscription: Pub/Sub does not
 * deliver it again). Over real HTTP, through the worker's push endpoint.
 */

const meta = newBatchMeta({
  shape: 'contacts',
  accountId: '0d1b8c6e-1e43-4a4e-8a0c-2b8e1f7c9a21',
  connectionId: 'conn_1',
  source: 'crm',
  receivedAt: '2026-09-04T12:00:00.000Z',
})
const good: Record<string, string> = { ...batchAttributes(meta) }
const without = (name: string) => Object.fromEntries(Object.entries(good).filter(([k]) => k !== name))

const BAD: Record<string, Record<string, string>> = {
  'another version': { ...good, v: '2' },
  'no version': without('v'),
  'an unknown shape': { ...good, shape: 'csv' },
  'no shape': without('shape'),
  'an empty account id': { ...good, account_id: '' },
  'no connection id': without('connection_id'),
  'no batch id': without('batch_id'),
  'received_at not an instant': { ...good, received_at: 'yesterday' },
  'received_at a date only': { ...good, received_at: '2026-09-04' },
  'received_at in HTTP date form': { ...good, received_at: 'Fri, 04 Sep 2026 12:00:00 GMT' },
  'an empty location id': { ...good, location_id: '' },
  'indexes not a list of positions': { ...good, indexes: '0,,1' },
  'indexes with a leading zero': { ...good, indexes: '01' },
}

interface LogLine {
  msg: string
  level: number
  reason?: string
}

describe('contact-batches messages on consume', () => {
  const lines: LogLine[] = []
  const q = recordingQueue()
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let worker: App
  let base: string

  beforeAll(async () => {
    deps = await createTestDeps({ queue: q.queue })
    const logger = pino(
      { level: 'info' },
      {
        write: (s: string) => {
          lines.push(JSON.parse(s) as LogLine)
        },
      },
    )
    worker = await buildWorker({ ...deps, logger })
    await worker.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(worker.server.address() as { port: number }).port}`
  })
  afterAll(async () => {
    await worker?.close()
    await deps?.cleanup()
  })

  const push = (attributes: Record<string, string>, data: string) =>
    fetch(`${base}/pubsub/contact-batches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        message: { data: Buffer.from(data).toString('base64'), attributes, messageId: `m-${Math.random()}`, publishTime: new Date().toISOString() },
        subscription: 'projects/lsv-test/subscriptions/contact-batches-push',
      }),
    })

  it('what the edge writes holds: its attributes match the schema and decode', () => {
    expect(messageCheck(BatchMessageAttributes)(good)).toEqual({ ok: true, value: good })
    const decoded = decodeBatchMessage({ data: Buffer.from('{"contacts":[{"external_id":"a"}]}'), attributes: good })
    expect(decoded).toMatchObject({ shape: 'contacts', accountId: meta.accountId, batchId: meta.batchId, receivedAt: meta.receivedAt, indexes: [0] })
    const located = batchAttributes({ ...meta, locationId: 'loc-1' }, [3])
    expect(messageCheck(BatchMessageAttributes)(located).ok).toBe(true)
    expect(decodeBatchMessage({ data: Buffer.from('{"contacts":[{"external_id":"a"}]}'), attributes: { ...located } })).toMatchObject({
      locationId: 'loc-1',
      indexes: [3],
    })
  })

  it('refuses each malformed message: 204 (acked), parked as it came with the reason, logged', async () => {
    const data = '{"contacts":[{"external_id":"never-stored"}]}'
    for (const [label, attributes] of Object.entries(BAD)) {
      const dead = q.deadLetters().length
      const logged = lines.length
      const res = await push(attributes, data)
      expect({ label, status: res.status }).toEqual({ label, status: 204 })
      const parked = q.deadLetters().slice(dead)
      expect(parked, label).toHaveLength(1)
      expect(parked[0]!.data.toString(), label).toBe(data)
      expect(parked[0]!.attributes, label).toMatchObject(attributes)
      expect(parked[0]!.attributes['x-dead-letter-reason'], label).toMatch(/\S/)
      const refusal = lines.slice(logged).filter((l) => l.msg === 'batch message can never be processed: dead-lettered')
      expect(refusal, label).toHaveLength(1)
      expect(refusal[0]!.level, label).toBe(50)
    }
    expect(q.changes()).toHaveLength(0)
  })

  it('refuses a body that is not a batch of its shape the same way', async () => {
    for (const data of ['not json', '{"contacts":[]}', '{"events":[{"resolution":{}}]}']) {
      const dead = q.deadLetters().length
      expect((await push(good, data)).status).toBe(204)
      expect(
        q
          .deadLetters()
          .slice(dead)
          .map((m) => m.data.toString()),
      ).toEqual([data])
    }
  })
})
