/**
 * The embedded queue's message ids are UUIDv7 (RFC 9562): the publish time's milliseconds first,
 * so a commit's new messages land at the right edge of the `id` index instead of one random page
 * each (adapters/embedded/queue-publisher.ts; docs/performance.md, "Fourth pass"), and unique
 * within a millisecond through their 74 random bits.
 */
import { afterEach, describe, expect, it } from 'vitest'
import pino from 'pino'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { openEmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createEmbeddedQueue } from '@lsv/shared/adapters/embedded/queue.ts'
import { tempDataDir } from '../helpers/embedded.ts'

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

describe('embedded queue message ids', () => {
  it('are UUIDv7 of the publish time: they sort as the messages were published, and never repeat', async () => {
    const dir = tempDataDir()
    cleanups.push(() => dir.cleanup())
    const clock = new ManualClock(Date.UTC(2026, 10, 28, 21))
    const edb = openEmbeddedDb(dir.dir)
    const queue = createEmbeddedQueue(edb, { clock, logger: pino({ level: 'silent' }) })
    cleanups.push(async () => {
      await queue.close()
      await edb.close()
    })

    const ids: string[] = []
    for (let i = 0; i < 20; i++) {
      ids.push(await queue.publish('contact-batches', Buffer.from(`{"n":${i}}`), {}))
      clock.advance(1)
    }
    // the same millisecond, published together (one commit)
    const together = await Promise.all(Array.from({ length: 50 }, (_, i) => queue.publish('contact-batches', Buffer.from(`{"m":${i}}`), {})))

    for (const id of [...ids, ...together]) expect(id).toMatch(UUID_V7)
    expect([...ids].sort()).toEqual(ids)
    expect(Number.parseInt(ids[0]!.replace('-', '').slice(0, 12), 16)).toBe(Date.UTC(2026, 10, 28, 21))
    expect(new Set([...ids, ...together]).size).toBe(70)
  })
})
