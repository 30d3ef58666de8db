/**
 * The embedded queue under long use (issue 16, item 7): what it keeps, for how long, and what the
 * file looks like afterwards. Rows are counted on a connection of the test's own.
 */
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { afterEach, describe, expect, it } from 'vitest'
import pino from 'pino'
import { ManualClock, systemClock, type Clock } from '@lsv/shared/model/clock.ts'
import { openEmbeddedDb, type EmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createEmbeddedQueue, DEFAULT_RETENTION_MS, type EmbeddedQueueOptions } from '@lsv/shared/adapters/embedded/queue.ts'
import type { QueueMessage } from '@lsv/shared/ports/queue.ts'
import type { Topic } from '@lsv/shared/model/topics.ts'
import { tempDataDir } from '../helpers/embedded.ts'
import { sleep, waitFor } from '../conformance/suites/wait.ts'

const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' })
const DAY = 24 * 60 * 60_000
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

function folder(): string {
  const dir = tempDataDir()
  cleanups.push(() => dir.cleanup())
  return dir.dir
}

function adapter(dir: string, clock: Clock = systemClock, extra: Partial<EmbeddedQueueOptions> = {}) {
  const edb: EmbeddedDb = openEmbeddedDb(dir)
  const queue = createEmbeddedQueue(edb, { clock, logger, pollIntervalMs: 20, nackBackoffMs: 10, ...extra })
  cleanups.push(async () => {
    await queue.close()
    edb.close()
  })
  return { edb, queue }
}

/** queue rows per topic, read on a connection of our own */
function rows(dir: string): Record<string, number> {
  const db = new DatabaseSync(join(dir, 'platform.db'), { readOnly: true })
  try {
    const out: Record<string, number> = {}
    for (const r of db.prepare('SELECT topic, count(*) AS n FROM queue_messages GROUP BY topic').all() as Array<{ topic: string; n: number }>)
      out[r.topic] = r.n
    return out
  } finally {
    db.close()
  }
}

async function drain(queue: ReturnType<typeof adapter>['queue'], topic: Topic, expected: number, maxInFlight = 10): Promise<QueueMessage[]> {
  const got: QueueMessage[] = []
  const sub = await queue.subscribe(
    topic,
    async (m) => {
      got.push(m)
      return 'ack'
    },
    { maxInFlight },
  )
  await waitFor(() => got.length >= expected, `${expected} deliveries on ${topic}`)
  await sleep(200) // room for an extra delivery to show up
  await sub.close() // waits for the acks to commit
  return got
}

describe('embedded queue: what it keeps', () => {
  it('publishing to a topic nothing subscribes to adds no row (npm start: contact-changes piled up to ~900,000 rows)', async () => {
    const dir = folder()
    const { queue } = adapter(dir)
    for (let i = 0; i < 100; i++) await queue.publish('contact-changes', Buffer.from(`change ${i}`))
    await queue.publish('contact-batches', Buffer.from('kept'))
    expect(rows(dir)).toEqual({ 'contact-batches': 1 })
  })

  it('removes acknowledged messages: no row is left once every message is acked', async () => {
    const dir = folder()
    const { queue } = adapter(dir)
    for (let i = 0; i < 50; i++) await queue.publish('contact-batches', Buffer.from(`m${i}`))
    expect(rows(dir)).toEqual({ 'contact-batches': 50 })
    const got = await drain(queue, 'contact-batches', 50)
    expect(new Set(got.map((m) => m.id)).size).toBe(50)
    expect(rows(dir)).toEqual({})
  })

  it('declares the subscriptions of the fixed topology when created, so the edge can publish before the worker starts', async () => {
    const dir = folder()
    // a publisher alone (the edge process): nothing has subscribed yet
    const edge = adapter(dir)
    const id = await edge.queue.publish('contact-batches', Buffer.from('accepted with a 202'))
    await edge.queue.publish('visit-events', Buffer.from('visit'))
    // the worker comes up later, in another adapter on the same file
    const worker = adapter(dir)
    const got = await drain(worker.queue, 'contact-batches', 1)
    expect(got.map((m) => m.id)).toEqual([id])
    expect(rows(dir)).toEqual({ 'visit-events': 1 })
  })
})

describe('embedded queue: retention', () => {
  it(`drops a message nobody acknowledged ${DEFAULT_RETENTION_MS / DAY} days after it was published, keeps younger ones`, async () => {
    const dir = folder()
    const clock = new ManualClock()
    const { queue } = adapter(dir, clock)
    await queue.publish('contact-batches', Buffer.from('old'))
    clock.advance(DEFAULT_RETENTION_MS - 60_000)
    const young = await queue.publish('contact-batches', Buffer.from('young'))
    expect(await queue.sweep()).toBe(0)
    clock.advance(120_000) // 'old' is now past the retention, 'young' is not
    expect(await queue.sweep()).toBe(1)
    expect(rows(dir)).toEqual({ 'contact-batches': 1 })
    const got = await drain(queue, 'contact-batches', 1)
    expect(got.map((m) => m.id)).toEqual([young])
  })

  it('sweeps a large expired backlog in batches, without holding the event loop for all of it', async () => {
    const dir = folder()
    const clock = new ManualClock()
    const { queue } = adapter(dir, clock)
    await Promise.all(Array.from({ length: 3000 }, (_, i) => queue.publish('visit-events', Buffer.from(`v${i}`))))
    clock.advance(DEFAULT_RETENTION_MS + 1)
    let turns = 0
    const ticking = setInterval(() => turns++, 0)
    const removed = await queue.sweep()
    clearInterval(ticking)
    expect(removed).toBe(3000)
    expect(rows(dir)).toEqual({})
    // 500 rows per transaction: timers ran between the six batches
    expect(turns).toBeGreaterThanOrEqual(2)
  })

  it('keeps a dead letter for the retention period from the moment it was dead-lettered', async () => {
    const dir = folder()
    const clock = new ManualClock()
    const { queue } = adapter(dir, clock)
    await queue.publish('contact-batches', Buffer.from('poison'))
    clock.advance(DEFAULT_RETENTION_MS - DAY) // a day before the original would expire
    const sub = await queue.subscribe('contact-batches', async () => 'nack', { maxDeliveryAttempts: 1 })
    await waitFor(async () => (await queue.readDeadLetters('contact-batches')).length === 1, 'dead letter')
    await sub.close()
    clock.advance(2 * DAY) // past the original's retention, within the dead letter's
    await queue.sweep()
    expect(await queue.readDeadLetters('contact-batches')).toHaveLength(1)
    clock.advance(DEFAULT_RETENTION_MS)
    await queue.sweep()
    expect(await queue.readDeadLetters('contact-batches')).toEqual([])
    expect(rows(dir)).toEqual({})
  })

  it('removes a subscription that subscribe() created once no consumer used it for a day, with its messages; declared ones stay', async () => {
    const dir = folder()
    const clock = new ManualClock()
    const { queue } = adapter(dir, clock)
    const sub = await queue.subscribe('contact-changes', async () => 'ack')
    await sub.close()
    await queue.publish('contact-changes', Buffer.from('kept while the subscription exists'))
    await queue.publish('contact-batches', Buffer.from('declared: kept'))
    expect(rows(dir)).toEqual({ 'contact-batches': 1, 'contact-changes': 1 })
    clock.advance(DAY + 1)
    expect(await queue.sweep()).toBe(1)
    expect(rows(dir)).toEqual({ 'contact-batches': 1 })
    await queue.publish('contact-changes', Buffer.from('no subscription any more'))
    expect(rows(dir)).toEqual({ 'contact-batches': 1 })
  })

  it('keeps the subscription of a consumer that stays attached, however long', async () => {
    const dir = folder()
    const clock = new ManualClock()
    const { queue } = adapter(dir, clock)
    const got: string[] = []
    const sub = await queue.subscribe('contact-changes', async (m) => {
      got.push(m.data.toString())
      return 'ack'
    })
    for (let day = 0; day < 3; day++) {
      clock.advance(DAY - 1000)
      await queue.sweep()
    }
    await queue.publish('contact-changes', Buffer.from('still subscribed'))
    await waitFor(() => got.length === 1, 'delivery')
    await sub.close()
    expect(got).toEqual(['still subscribed'])
  })
})

describe('embedded queue: the file on disk', () => {
  const fileBytes = (dir: string) => statSync(join(dir, 'platform.db')).size

  it('gives the pages of a consumed backlog back to the file system', async () => {
    const dir = folder()
    const { edb, queue } = adapter(dir)
    const payload = Buffer.alloc(256 * 1024, 7)
    // a backlog of 40 MiB (the worker was down), then consumed
    for (let i = 0; i < 160; i++) await queue.publish('contact-batches', payload)
    await edb.maintain()
    const full = fileBytes(dir)
    expect(full).toBeGreaterThan(40 * 1024 * 1024)
    await drain(queue, 'contact-batches', 160, 16)
    await edb.maintain()
    await edb.maintain()
    // what is left: the slack of reusable pages (8 MiB) and the schema
    expect(fileBytes(dir)).toBeLessThan(12 * 1024 * 1024)
    expect(edb.stats().autoVacuum).toBe('incremental')
  })

  it('upgrades a file of an earlier version: unconsumed topics dropped, pending batches kept, free pages given back from then on', async () => {
    const dir = folder()
    // the layout the earlier version wrote (no subscriptions, no expiry, auto_vacuum off)
    const old = new DatabaseSync(join(dir, 'platform.db'))
    old.exec(`PRAGMA journal_mode = WAL;
      CREATE TABLE queue_messages (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, topic TEXT NOT NULL,
        data BLOB NOT NULL, attributes TEXT NOT NULL, published_at TEXT NOT NULL, visible_at INTEGER NOT NULL,
        delivery_count INTEGER NOT NULL DEFAULT 0, lease_token TEXT);
      CREATE INDEX queue_messages_due ON queue_messages (topic, visible_at, seq);`)
    const put = old.prepare('INSERT INTO queue_messages (id, topic, data, attributes, published_at, visible_at) VALUES (?, ?, ?, ?, ?, ?)')
    const at = new Date().toISOString()
    old.exec('BEGIN')
    for (let i = 0; i < 5000; i++) put.run(`c${i}`, 'contact-changes', Buffer.alloc(4000, 1), '{"v":"1"}', at, 0)
    for (let i = 0; i < 3; i++) put.run(`b${i}`, 'contact-batches', Buffer.from(`batch ${i}`), '{}', at, 0)
    put.run('d0', 'contact-batches-dead-letter', Buffer.from('dead'), '{}', at, 0)
    old.exec('COMMIT')
    old.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    old.close()
    const before = fileBytes(dir)
    expect(before).toBeGreaterThan(20 * 1024 * 1024)

    const { edb, queue } = adapter(dir)
    expect(rows(dir)).toEqual({ 'contact-batches': 3, 'contact-batches-dead-letter': 1 })
    expect(edb.stats().autoVacuum).toBe('incremental')
    await edb.maintain()
    expect(fileBytes(dir)).toBeLessThan(before / 10)
    const got = await drain(queue, 'contact-batches', 3)
    expect(got.map((m) => m.id).sort()).toEqual(['b0', 'b1', 'b2'])
    expect(await queue.readDeadLetters('contact-batches')).toHaveLength(1)
    // and a second start finds nothing left to do
    const again = adapter(dir)
    expect(again.edb.stats().autoVacuum).toBe('incremental')
    expect(rows(dir)).toEqual({ 'contact-batches-dead-letter': 1 })
  })
})
