/**
 * The write gate between the threads of one process on one database file
 * (shared/src/adapters/embedded/write-gate.ts; the local stack's main thread and its consumer
 * threads). SQLite's lock is not fair: without the gate, a thread upserting a batch in back-to-back
 * transactions kept the main thread's writes waiting, asleep on the event loop (`/healthz` p99
 * 2.1 s under load, docs/performance.md).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Worker } from 'node:worker_threads'
import { openEmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createWriteGateBuffer, gateTurns } from '@lsv/shared/adapters/embedded/write-gate.ts'
import { DOCS_PER_CHUNK } from '@lsv/shared/adapters/contact-upsert.ts'
import { tempDataDir } from '../helpers/embedded.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const cleanups: Array<() => unknown> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

describe('write gate: turns between a serving and a background thread', () => {
  it('the serving side waits for a background transaction off the event loop, and only while one is under way', async () => {
    const buffer = createWriteGateBuffer()
    const serving = gateTurns({ buffer, role: 'serving' })
    const background = gateTurns({ buffer, role: 'background' })
    expect(serving.clear()).toBeNull()
    background.enter()
    const clear = serving.clear()
    expect(clear).not.toBeNull()
    let cleared = false
    void clear!.then(() => {
      cleared = true
    })
    await sleep(20)
    expect(cleared).toBe(false) // the event loop ran meanwhile (this test's timer fired)
    background.leave()
    await clear
    expect(cleared).toBe(true)
    expect(serving.clear()).toBeNull()
  })

  it('a background transaction is asked to commit early once the serving side wants the lock and it held it a few ms', async () => {
    const buffer = createWriteGateBuffer()
    const serving = gateTurns({ buffer, role: 'serving' })
    const background = gateTurns({ buffer, role: 'background' })
    background.enter()
    await sleep(10)
    expect(background.yieldRequested()).toBe(false) // nobody waits
    serving.want()
    expect(background.yieldRequested()).toBe(true)
    background.leave()
    serving.done()
    background.enter()
    serving.want()
    expect(background.yieldRequested()).toBe(false) // just started: it makes progress first
    background.leave()
    serving.done()
    expect(serving.yieldRequested()).toBe(false) // the serving side's own transactions are short: never asked
  })

  it('a background writer steps back while the serving side wants the lock, and goes ahead after a bounded wait', () => {
    const buffer = createWriteGateBuffer()
    const serving = gateTurns({ buffer, role: 'serving' })
    const background = gateTurns({ buffer, role: 'background' })
    serving.want()
    const started = performance.now()
    background.enter() // blocks this thread: the serving side never lets go here
    expect(performance.now() - started).toBeGreaterThanOrEqual(45) // MAX_YIELD_MS, 50
    background.leave()
    serving.done()
  })

  it('an exclusive background turn waits out the serving transaction under way, and the serving side waits for the turn', () => {
    const buffer = createWriteGateBuffer()
    const serving = gateTurns({ buffer, role: 'serving' })
    const background = gateTurns({ buffer, role: 'background' })
    // nobody in a transaction: the turn runs at once, and meanwhile grouped writes wait for it
    let started = performance.now()
    const waitedDuring = background.exclusive(() => serving.clear() !== null)
    expect(performance.now() - started).toBeLessThan(40)
    expect(waitedDuring).toBe(true)
    expect(serving.clear()).toBeNull()
    // a serving transaction under way: the turn waits for its end (bounded, MAX_EXCLUSIVE_WAIT_MS
    // 100, since this one thread cannot end it meanwhile), where a plain background turn would step back
    serving.enter()
    started = performance.now()
    background.exclusive(() => {})
    expect(performance.now() - started).toBeGreaterThanOrEqual(95)
    serving.leave()
    // during a turn, a serving transaction waits for its end (bounded, MAX_SERVING_WAIT_MS 250)
    const waited = background.exclusive(() => {
      const at = performance.now()
      serving.enter()
      const ms = performance.now() - at
      serving.leave()
      return ms
    })
    expect(waited).toBeGreaterThanOrEqual(245)
  })

  it("two threads on one file: the main thread's grouped writes get in while another thread upserts a batch", async () => {
    const { dir, cleanup } = tempDataDir()
    cleanups.push(cleanup)
    const buffer = createWriteGateBuffer()
    const edb = openEmbeddedDb(dir, undefined, { writeGate: { buffer, role: 'serving' } })
    cleanups.push(() => edb.close())
    edb.db.exec('CREATE TABLE pings (at REAL)')
    const insert = edb.db.prepare('INSERT INTO pings (at) VALUES (?)')
    const RECORDS = 10_000
    const worker = new Worker(new URL('./fixtures/gated-upsert.ts', import.meta.url), { workerData: { dir, buffer, records: RECORDS, gated: true } })
    cleanups.push(() => worker.terminate())
    await new Promise((resolve) => worker.once('message', resolve)) // ready
    const done = new Promise<{ transactions: number }>((resolve) => worker.once('message', resolve))
    let finished = false
    void done.then(() => {
      finished = true
    })
    worker.postMessage('go')

    // one write every 5 ms from the main thread for as long as the batch runs
    const writes: Array<Promise<boolean>> = []
    while (!finished) {
      writes.push(edb.groupCommit(() => insert.run(performance.now())).then(() => !finished))
      await sleep(5)
    }
    const { transactions } = await done
    const duringBatch = (await Promise.all(writes)).filter(Boolean).length
    // the batch committed early for the main thread's writes, instead of chunk after chunk
    expect(transactions).toBeGreaterThan(Math.ceil(RECORDS / DOCS_PER_CHUNK))
    // and they got in while it ran, not after it (the last one or two may meet its end)
    expect(duringBatch, `${duringBatch} of ${writes.length} writes committed while the batch ran`).toBeGreaterThanOrEqual(writes.length - 2)
  }, 60_000)
})
