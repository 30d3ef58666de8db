import { afterAll, describe, expect, it } from 'vitest'
import { request } from 'node:http'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import type { Queue, QueueMessage } from '@lsv/shared/ports/queue.ts'
import type { Topic } from '@lsv/shared/model/topics.ts'
import type { ContactRecord } from '@lsv/shared/model/records.ts'
import { handleBatchMessage } from '../../services/upsert-worker/src/handle-batch.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { tempDataDir } from '../helpers/embedded.ts'
import { createTestTenant } from '../helpers/tenant.ts'
import { RELIABILITY_TENANT, type Injectable } from './support/requests.ts'
import { allocatePorts, killStack, readDemoCredentials, startStack, stopStack } from './support/stack.ts'
import type { Spawned } from './support/processes.ts'
import { printFigure } from './support/figures.ts'

/**
 * Item 1: crash safety.
 *
 * Half 1 drives the local stack (scripts/start-local.ts) as separate processes: 20 batches of
 * 10,000 records pushed to the edge while the upsert worker runs; the whole process tree is
 * SIGKILLed at random moments (mid-push and mid-upsert), restarted, and a batch without a 202 is
 * pushed again (retry is safe, contract 7.5). At the end every record of every 202 batch must be
 * stored exactly once with the pushed values.
 *
 * Half 2 drives the upsert worker's handler directly with the real messages the edge produced
 * (captured by a recording Queue): a single in-order run, then runs with every message delivered
 * twice in shuffled orders. The final rows must equal the in-order run's exactly.
 */

const BATCHES = Number(process.env.CRASH_BATCHES ?? 20)
const PER_BATCH = Number(process.env.CRASH_PER_BATCH ?? 10_000)
const KILLS = Number(process.env.CRASH_KILLS ?? 4)

/** seeded PRNG so a failing run can be replayed (CRASH_SEED) */
function prng(seed: number) {
  let s = seed >>> 0 || 1
  return () => {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    return (s >>> 0) / 2 ** 32
  }
}

function batchBody(j: number): Buffer {
  const records = Array.from({ length: PER_BATCH }, (_, i) => ({
    external_id: `c-${j}-${i}`,
    email: `c${j}.${i}@example.com`,
    first_name: `F${j}x${i}`,
    last_name: `L${j}`,
  }))
  return Buffer.from(JSON.stringify({ contacts: records }))
}

function post(port: number, host: string, key: string, body: Buffer): Promise<number | null> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/contacts',
        method: 'POST',
        headers: { host, authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': String(body.length) },
      },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? null))
        res.on('error', () => resolve(null))
      },
    )
    req.on('error', () => resolve(null))
    req.end(body)
  })
}

describe('reliability 1: crash safety of the local stack', () => {
  const data = tempDataDir('lsv-rel-crash-')
  let stack: Spawned | null = null
  afterAll(async () => {
    if (stack) await stopStack(stack)
    data.cleanup()
  })

  it(`SIGKILL at random points while ${BATCHES} x ${PER_BATCH} records are pushed and upserted: every 202 record stored exactly once`, async () => {
    const seed = Number(process.env.CRASH_SEED ?? Date.now() % 100_000)
    const rnd = prng(seed)
    const ports = await allocatePorts()
    stack = await startStack(data.dir, ports)
    const creds = readDemoCredentials(data.dir)
    const host = `${creds.public_id}.edge.localhost:${ports.edge}`
    // kill points: a batch index and a delay into (or after) its push
    const killAt = new Map<number, number>()
    while (killAt.size < Math.min(KILLS, BATCHES)) killAt.set(Math.floor(rnd() * BATCHES), Math.floor(rnd() * 1500))
    const accepted = new Set<number>()
    let kills = 0
    let retries = 0
    for (let j = 0; j < BATCHES; j++) {
      const body = batchBody(j)
      for (let attempt = 0; !accepted.has(j); attempt++) {
        if (attempt > 5) throw new Error(`batch ${j} never accepted`)
        if (attempt > 0) retries++
        const pending = post(ports.edge, host, creds.api_key, body)
        const delay = attempt === 0 ? killAt.get(j) : undefined
        if (delay !== undefined) {
          await new Promise((r) => setTimeout(r, delay))
          await killStack(stack)
          kills++
          const status = await pending
          if (status === 202) accepted.add(j)
          stack = await startStack(data.dir, ports)
          continue
        }
        if ((await pending) === 202) accepted.add(j)
        else await new Promise((r) => setTimeout(r, 500))
      }
    }

    // let the worker drain (every queued batch applied: none left on the queue), then stop the
    // stack cleanly and read the store. Polled with a count on a read-only connection: reading
    // every row each time cost more CPU than the worker's own work on a busy machine.
    const accountId = creds.account_id
    const deadline = Date.now() + 8 * 60_000
    while (batchesQueued(data.dir) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250))
    await stopStack(stack)
    stack = null
    const deps = await createTestDeps({ env: { DATA_DIR: data.dir } })
    try {
      const rows = await listAll(deps, accountId)
      const seen = new Map<string, number>()
      const wrong: string[] = []
      for (const r of rows) {
        seen.set(r.external_id, (seen.get(r.external_id) ?? 0) + 1)
        const m = /^c-(\d+)-(\d+)$/.exec(r.external_id)
        if (!m) continue
        if (r.identity.first_name !== `F${m[1]}x${m[2]}` || (r.business_email !== null && r.business_email !== `c${m[1]}.${m[2]}@example.com`.toLowerCase()))
          wrong.push(r.external_id)
      }
      let missing = 0
      let duplicated = 0
      for (const j of accepted)
        for (let i = 0; i < PER_BATCH; i++) {
          const n = seen.get(`c-${j}-${i}`) ?? 0
          if (n === 0) missing++
          if (n > 1) duplicated++
        }
      const stored = accepted.size * PER_BATCH - missing
      printFigure(
        'crash-safety',
        `${stored}/${accepted.size * PER_BATCH} records of 202 batches stored exactly once (${missing} missing, ${duplicated} duplicated, ${wrong.length} with wrong values; ${kills} SIGKILLs, ${retries} re-pushes, seed ${seed})`,
      )
      expect(accepted.size).toBe(BATCHES)
      expect(missing).toBe(0)
      expect(duplicated).toBe(0)
      expect(wrong.slice(0, 10)).toEqual([])
    } finally {
      await deps.cleanup().catch(() => {})
    }
  })
})

/** `contact-batches` messages still on the stack's embedded queue (a row leaves it once its batch is applied and acked) */
function batchesQueued(dataDir: string): number {
  const db = new DatabaseSync(join(dataDir, 'platform.db'), { readOnly: true })
  try {
    db.exec('PRAGMA busy_timeout = 5000')
    return (db.prepare("SELECT count(*) AS n FROM queue_messages WHERE topic = 'contact-batches'").get() as { n: number }).n
  } finally {
    db.close()
  }
}

async function listAll(deps: Awaited<ReturnType<typeof createTestDeps>>, accountId: string): Promise<ContactRecord[]> {
  const out: ContactRecord[] = []
  let after: string | undefined
  for (;;) {
    const page = await deps.contacts.list(accountId, { after, limit: 1000 })
    out.push(...page)
    if (page.length < 1000) return out
    after = page.at(-1)!.id
  }
}

describe('reliability 1: replayed and reordered batch messages converge', () => {
  it('every message delivered twice, in shuffled orders: final rows equal a single in-order run', async () => {
    const published: QueueMessage[] = []
    const recording: Queue = {
      async publish(topic: Topic, data: Buffer, attributes: Record<string, string> = {}) {
        const id = `m-${published.length + 1}`
        if (topic === 'contact-batches') published.push({ id, data, attributes, deliveryAttempt: 1, publishedAt: new Date(clock.now()).toISOString() })
        return id
      },
      async subscribe() {
        return { close: async () => {} }
      },
      async subscribeDeadLetters() {
        return { close: async () => {} }
      },
      async close() {},
    }
    const clock = new ManualClock(Date.UTC(2026, 8, 4, 12))
    const producer = await createTestDeps({ clock, queue: recording })
    const dir = producer.config.dataDir
    const edge = (await buildEdge(producer)) as unknown as Injectable
    const portal = (await buildPortal(producer)) as unknown as Injectable
    const cleanups: Array<() => Promise<void>> = [() => producer.cleanup(), () => edge.close().then(() => {}), () => portal.close().then(() => {})]
    try {
      const t = await createTestTenant({ managementApi: portal, deps: producer }, RELIABILITY_TENANT)
      // 8 batches over 300 overlapping ids: later batches overwrite earlier ones, some fields
      // only in some batches, one batch with a null (ignored) and a duplicate id inside it
      for (let j = 0; j < 8; j++) {
        const contacts = Array.from({ length: 300 }, (_, i) => {
          const id = (i * (j + 1)) % 300
          const r: Record<string, unknown> = { external_id: `r-${id}`, first_name: `F${j}-${id}` }
          if (j % 2 === 0) r.email = `r${id}.b${j}@example.com`
          if (j % 3 === 0) r.company = `Co${j}`
          if (j === 5) r.last_name = null
          if (j === 6 && i === 0) r.title = 'first'
          return r
        })
        if (j === 6) contacts.push({ external_id: 'r-0', first_name: 'F6-dup', title: 'second' })
        const res = await edge.inject({
          method: 'POST',
          url: '/v1/contacts',
          payload: JSON.stringify({ contacts }),
          headers: { host: t.host, authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
        })
        expect(res.statusCode).toBe(202)
        clock.advance(1000)
      }
      expect(published).toHaveLength(8)

      const runWith = async (order: QueueMessage[]) => {
        const store = await createTestDeps({ clock })
        const worker = await createTestDeps({ clock, env: { DATA_DIR: dir }, contacts: store.contacts })
        cleanups.push(
          () => worker.close(),
          () => store.cleanup(),
        )
        for (const [n, m] of order.entries()) {
          const result = await handleBatchMessage(worker, { ...m, deliveryAttempt: 1 + order.slice(0, n).filter((x) => x.id === m.id).length })
          expect(result).not.toBe('nack')
        }
        return listAll(store, t.accountId)
      }
      const reference = await runWith(published)
      const rnd = prng(9001)
      const orders: QueueMessage[][] = []
      for (let k = 0; k < 4; k++) {
        const twice = [...published, ...published]
        for (let i = twice.length - 1; i > 0; i--) {
          const j = Math.floor(rnd() * (i + 1))
          ;[twice[i], twice[j]] = [twice[j]!, twice[i]!]
        }
        orders.push(twice)
      }
      orders.push([...published].reverse().flatMap((m) => [m, m]))
      let equal = 0
      for (const order of orders) {
        const rows = await runWith(order)
        if (JSON.stringify(rows) === JSON.stringify(reference)) equal++
        else expect(rows).toEqual(reference)
      }
      printFigure(
        'crash-replay',
        `${equal}/${orders.length} duplicated+reordered deliveries of ${published.length} batch messages end with rows equal to the in-order run (${reference.length} rows)`,
      )
      expect(reference.length).toBe(300)
      expect(equal).toBe(orders.length)
    } finally {
      for (const c of cleanups.reverse()) await c().catch(() => {})
    }
  })
})
