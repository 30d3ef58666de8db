import { describe, expect, it } from 'vitest'
import { buildApp } from '../../services/edge-ingest/src/app.ts'
import { handleBatchMessage } from '../../services/upsert-worker/src/handle-batch.ts'
import type { Queue, QueueMessage } from '@lsv/shared/ports/queue/interface.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { createIngestTenant, record } from './support/tenant.ts'

describe('smoke', () => {
  it('push then worker', async () => {
    const published: QueueMessage[] = []
    const queue: Queue = { async publish(topic, data, attributes = {}) { if (topic === 'contact-batches') published.push({ id: String(published.length), data, attributes, deliveryAttempt: 1, publishedAt: '' }); return 'x' }, async subscribe() { return { close: async () => {} } }, async close() {} }
    const deps = await createTestDeps({ queue })
    const app = await buildApp(deps)
    const t = await createIngestTenant(deps)
    const res = await app.inject({ method: 'POST', url: '/v1/contacts', headers: t.keyHeaders(), payload: JSON.stringify({ contacts: [record(1), { email: 'x' }] }) })
    console.log(res.statusCode, res.body)
    expect(await handleBatchMessage(deps, published[0]!)).toBe('ack')
    console.log(JSON.stringify(await deps.contacts.getByAnchor(t.account.id, 'crm', 'ext-1'), null, 1))
    await app.close(); await deps.cleanup()
  })
})
