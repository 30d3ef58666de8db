import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Writable } from 'node:stream'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { createLogger } from '@lsv/shared/logging/logger.ts'
import type { QueueMessage } from '@lsv/shared/ports/queue.ts'
import { handleBatchMessage } from '../../services/upsert-worker/src/handle-batch.ts'
import { createHarness, body, type Harness, record } from './support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

/**
 * The upsert worker's lines the log-based metrics read (infra/log-metrics.tf, docs/operations.md
 * "Metrics"): records by outcome with their count, the push-to-applied lag, what it dead-lettered.
 * test/infra/monitoring.test.ts checks the metrics name these fields; this checks the lines carry them.
 */
type Line = Record<string, unknown> & { message: string; batchId?: string }

describe('upsert worker: the lines behind the ingestion metrics', () => {
  const lines: Line[] = []
  const sink = new Writable({
    write(chunk: Buffer, _e, callback) {
      for (const text of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(text) as Line)
      callback()
    },
  })
  const clock = new ManualClock(Date.UTC(2026, 8, 4, 12))
  let h: Harness
  let t: StoredTenant

  beforeAll(async () => {
    h = await createHarness({ clock })
    h.deps.logger = createLogger('info', 'upsert-worker', sink)
    t = await createTestTenant(h.deps, {
      api: {
        mappings: [
          { from: 'external_id', to: 'external_id' },
          { from: 'email', to: 'email' },
          { from: 'notes', to: 'custom_fields.notes' },
        ],
      },
      customFields: [{ key: 'notes', type: 'large_text' }],
    })
  })
  afterAll(async () => {
    await t?.cleanup()
    await h?.close()
  })

  async function pushed(contacts: unknown[]): Promise<QueueMessage> {
    const before = h.q.batches().length
    const res = await h.edge.inject({ method: 'POST', url: '/v1/contacts', headers: t.keyHeaders(), payload: body(contacts) })
    expect(res.statusCode).toBe(202)
    return h.q.batches()[before]!
  }
  const linesOf = (message: QueueMessage, event: string) => lines.filter((l) => l.batchId === message.attributes.batch_id && l.event === event)

  it('one contact_records line per outcome with its count, and the lag since the 202 on the batch line', async () => {
    const message = await pushed([record(1), record(2), { email: 'no-anchor@example.com' }, { external_id: 'huge', notes: 'n'.repeat(1_000_000) }])
    // the worker runs 42 s after the edge answered: that is the lag the metric must see
    // (mutation: lagMs computed from the clock twice, or from anything but received_at → 0 or wrong)
    clock.advance(42_000)
    expect(await handleBatchMessage(h.deps, message)).toBe('ack')

    const outcomes = Object.fromEntries(linesOf(message, 'contact_records').map((l) => [l.outcome, l.records]))
    // mutation: an outcome dropped from logRecordOutcomes, or records counted as lines → this fails
    expect(outcomes).toEqual({ accepted: 2, no_external_id: 1, too_large: 1 })
    for (const l of linesOf(message, 'contact_records')) expect(l).toMatchObject({ severity: 'INFO', message: 'contact records', service: 'upsert-worker' })

    const batch = linesOf(message, 'contact_batch')
    expect(batch).toHaveLength(1)
    expect(batch[0]).toMatchObject({ message: 'batch upserted', lagMs: 42_000, records: 4 })

    // mutation: drop event/kind from the dead-letter line → the dead_lettered metric counts nothing
    expect(linesOf(message, 'dead_lettered')).toEqual([expect.objectContaining({ severity: 'ERROR', kind: 'records', records: 1 })])
  })

  it('an unreadable message: one dead_lettered line of kind message, no records counted', async () => {
    const good = await pushed([record(3)])
    const bad = { ...good, data: Buffer.from('not json') }
    expect(await handleBatchMessage(h.deps, bad)).toBe('ack')
    expect(linesOf(bad, 'dead_lettered')).toEqual([expect.objectContaining({ severity: 'ERROR', kind: 'message' })])
    expect(linesOf(bad, 'contact_records')).toEqual([])
    expect(linesOf(bad, 'contact_batch')).toEqual([])
  })
})
