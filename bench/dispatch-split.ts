/**
 * Where a delivery's main-thread time goes (`npm run bench:dispatch-split`; docs/performance.md,
 * "Eighth pass"). bench:dispatch compares the whole platform with a bare signed undici loop; this
 * one takes the platform apart, in one process, each part against the whole:
 *
 *  - `platform`: the delivery task handler as the dispatcher runs it (createDeliveryTaskHandler),
 *    on the embedded stores, called directly on the tasks' payloads (no scheduler: its cost is
 *    measured apart, below), 50 in flight;
 *  - `memory log`: the same, with the delivery log in memory (a Map, each read a shallow copy):
 *    what the log's SQLite reads and writes cost the thread;
 *  - `lean sender`: the same, with the webhook sender replaced by the bare loop's (an undici Pool
 *    to the receiver, the answer read with `body.text()`): what the SSRF-filtering agent, the
 *    exchange's deadline and the bounded answer read cost;
 *  - `pooled sender`: the platform's exchange (postOnce: deadline, bounded read, kept headers)
 *    over that Pool instead of the SSRF-filtering agent: the agent's share of the above;
 *  - `no listeners`: the same, with no delivery listener (endpoint health, latency histogram,
 *    failing events, attempt log): what the reactions cost;
 *  - `scheduler`: the embedded task scheduler running the tasks (claims, leases, marks, its task
 *    span) with a handler that does only the bare loop's work: what the scheduler costs;
 *  - `bare`: bench:dispatch's control, a bare signed undici loop.
 *
 * Each round runs every variant once, in an order rotated per round; per variant the median of
 * the rounds' main-thread CPU µs per delivery (process.threadCpuUsage: the receiver, in this
 * process, is counted on every side alike) is printed, with its difference from `platform`. The
 * rounds' own differences are paired, so a machine that speeds up or slows down between rounds
 * moves both sides of each; the middle half of those differences is printed with each, since on a
 * shared 2-core machine one run of the same code moves by ±15 %. Sizes: BENCH_DELIVERIES (1000)
 * per run, BENCH_ROUNDS (15).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import pino from 'pino'
import { Pool } from 'undici'
import { createWebhookSender } from '../shared/src/adapters/outbound-http/webhook-sender.ts'
import { loadConfig } from '../shared/src/config/config.ts'
import { createPlatformDeps } from '../shared/src/platform/deps.ts'
import type { PlatformDeps } from '../shared/src/ports/deps.ts'
import type { DeliveryLog } from '../shared/src/ports/delivery-log.ts'
import type { WebhookSender } from '../shared/src/ports/webhook-sender.ts'
import type { DeliveryRecord } from '../shared/src/model/records.ts'
import { createDelivery, readDeliveryTask } from '../shared/src/domain/webhooks/deliveries.ts'
import { createDeliveryTaskHandler } from '../shared/src/domain/webhooks/deliver.ts'
import { signatureHeaders } from '../shared/src/domain/webhooks/signing.ts'
import { makeBenchAccount } from './lib/bench-tenant.ts'
import { capturingTasks, eachInFlight, makeBenchIntegration, startBenchReceiver } from './lib/delivery-bench.ts'
import { fullGc, quietFrom } from './lib/quiet.ts'
import { mainThreadMeter } from './lib/main-thread.ts'
import { median } from './lib/rounds.ts'

const N = Number(process.env.BENCH_DELIVERIES ?? 1000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15)
const IN_FLIGHT = 50

/** The delivery log in memory: each read a shallow copy (the handler makes new records, it changes none). */
function memoryDeliveryLog(): DeliveryLog {
  const rows = new Map<string, DeliveryRecord>()
  return {
    put: async (d) => {
      rows.set(d.id, d)
    },
    get: async (id) => {
      const d = rows.get(id)
      return d ? { ...d } : null
    },
    list: async () => [],
    countByStatus: async () => ({ pending: 0, retrying: 0, succeeded: 0, failed: 0 }),
    listDue: async () => [],
    deleteAccountData: async () => rows.clear(),
    close: async () => {},
  }
}

async function main() {
  console.log(
    `bench:dispatch-split (${N} deliveries x ${ROUNDS} rounds, ${IN_FLIGHT} in flight, node ${process.version}, load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')})`,
  )
  const receiver = await startBenchReceiver()
  const { origin, url } = receiver
  const dir = mkdtempSync(join(tmpdir(), 'lsv-bench-dispatch-split-'))
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: dir,
    STORE_BACKEND: 'embedded',
    QUEUE_BACKEND: 'embedded',
    ALLOW_LOOPBACK_WEBHOOKS: 'true',
    WEBHOOK_ENDPOINT_RATE: '100000',
  })
  const captured = capturingTasks()
  // two platforms on one data folder: one whose tasks are captured (the handler-only variants),
  // one whose embedded scheduler runs them (the `scheduler` variant)
  const deps = await createPlatformDeps(config, pino({ level: 'silent' }), { tasks: captured })
  const scheduled = await createPlatformDeps(config, pino({ level: 'silent' }))
  const now = new Date().toISOString()
  const accountId = randomUUID()
  await makeBenchAccount(deps, accountId, now)
  const { integrationId, secret } = await makeBenchIntegration(deps, accountId, url, now)
  // a webhook body of the size bench:dispatch sends (a V2 event: about 2 KB)
  const bodyOf = (id: string) =>
    JSON.stringify({
      type: 'visitor.identified',
      id,
      account_id: accountId,
      data: { contact: { first_name: 'Jane', last_name: 'Doe', company: 'Acme' }, pad: 'x'.repeat(1800) },
    })

  const pool = new Pool(origin, { connections: IN_FLIGHT, pipelining: 1 })
  /** the bare loop's exchange: sign, POST through a Pool, read the answer */
  const bareSend = async (id: string, body: Buffer) => {
    const headers = signatureHeaders([secret], id, Date.now(), body) as unknown as Record<string, string>
    const res = await pool.request({ path: '/hook', method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } })
    await res.body.text()
  }
  const leanSender: WebhookSender = {
    post: async (_url, body, headers) => {
      const started = Date.now()
      const res = await pool.request({ path: '/hook', method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } })
      const text = await res.body.text()
      return { statusCode: res.statusCode, error: null, latencyMs: Date.now() - started, excerpt: text || null, retryAfter: undefined, headers: {} }
    },
  }

  let seq = 0
  /** N deliveries created through `d` (their tasks captured), then its handler run on them, 50 in flight */
  const handlerRun = (variant: (d: PlatformDeps) => PlatformDeps) => async () => {
    const d = variant(deps)
    // the last run's deliveries are not kept (the memory log would hold every run's: a heap that
    // grows by the round, and the GC work with it, charged to that variant alone)
    await d.deliveries.deleteAccountData(accountId)
    for (let i = 0; i < N; i++) {
      const eventId = `evt_split_${seq++}`
      await createDelivery(d, { accountId, integrationId, eventId, body: bodyOf(eventId), now: new Date().toISOString() })
    }
    const payloads = captured.taken()
    const handler = createDeliveryTaskHandler(d)
    fullGc()
    await quietFrom()
    const meter = mainThreadMeter()
    await eachInFlight(payloads, IN_FLIGHT, async (payload) => {
      const outcome = await handler(payload, { queue: 'split' })
      if (outcome !== 'succeeded') throw new Error(`a delivery ended ${outcome}`)
    })
    return meter.per(N).cpuUs
  }
  const memoryLog = memoryDeliveryLog()
  const variants: Record<string, () => Promise<number>> = {
    platform: handlerRun((d) => d),
    'memory log': handlerRun((d) => ({ ...d, deliveries: memoryLog })),
    'lean sender': handlerRun((d) => ({ ...d, webhookSender: leanSender })),
    'pooled sender': handlerRun((d) => ({ ...d, webhookSender: createWebhookSender(pool) })),
    'no listeners': handlerRun((d) => ({ ...d, listeners: { ...d.listeners, delivery: [] } })),
    async scheduler() {
      const ids: string[] = []
      for (let i = 0; i < N; i++) {
        const eventId = `evt_split_${seq++}`
        ids.push((await createDelivery(scheduled, { accountId, integrationId, eventId, body: bodyOf(eventId), now: new Date().toISOString() })).id)
      }
      const bodies = new Map(ids.map((id) => [id, Buffer.from(bodyOf(id))]))
      fullGc()
      await quietFrom()
      const meter = mainThreadMeter()
      let done = 0
      let resolveAll!: () => void
      const all = new Promise<void>((r) => (resolveAll = r))
      const runner = await scheduled.tasks.start(async (payload) => {
        const job = readDeliveryTask(payload)
        if (!job.ok) throw new Error(job.reason)
        await bareSend(job.value.delivery_id, bodies.get(job.value.delivery_id)!)
        if (++done === N) resolveAll()
      })
      await all
      const use = meter.per(N)
      await runner.close()
      return use.cpuUs
    },
    async bare() {
      const bodies = Array.from({ length: N }, () => {
        const id = `evt_split_${seq++}`
        return { id, body: Buffer.from(bodyOf(id)) }
      })
      fullGc()
      await quietFrom()
      const meter = mainThreadMeter()
      await eachInFlight(bodies, IN_FLIGHT, (b) => bareSend(b.id, b.body))
      return meter.per(N).cpuUs
    },
  }
  const names = Object.keys(variants)
  const us: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]))
  // one uncounted round first: every path's first run pays its JIT
  for (let r = -1; r < ROUNDS; r++) {
    const order = names.map((_, i) => names[(i + Math.max(r, 0)) % names.length]!)
    const got: Record<string, number> = {}
    const opened: string[] = []
    for (const name of order) {
      const before = receiver.connections()
      got[name] = await variants[name]!()
      if (r >= 0 && receiver.connections() > before) opened.push(`${name} ${receiver.connections() - before}`)
    }
    // every side keeps its connections between runs; a run that opened some paid for it (say so)
    if (opened.length > 0) console.log(`  connections opened in round ${r + 1}: ${opened.join(', ')}`)
    if (r < 0) continue
    for (const name of names) us[name]!.push(got[name]!)
    console.log(`round ${r + 1}: ${names.map((n) => `${n} ${got[n]!.toFixed(0)}`).join(', ')} µs`)
  }
  const platform = us.platform!
  console.log(
    "main-thread CPU µs per delivery: the median of the rounds, and the difference from `platform` as the median of the rounds' own differences with their middle half (the noise to read it against)",
  )
  const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(0)}`
  for (const name of names) {
    const diffs = us[name]!.map((x, i) => x - platform[i]!).sort((a, b) => a - b)
    const q = (f: number) => diffs[Math.floor(f * (diffs.length - 1))]!
    const diff = name === 'platform' ? '' : `${signed(median(diffs))}  (${signed(q(0.25))} to ${signed(q(0.75))})`
    console.log(`  ${name.padEnd(14)} ${median(us[name]!).toFixed(0).padStart(5)}   ${diff}`)
  }
  await pool.close()
  await deps.close()
  await scheduled.close()
  receiver.close()
  rmSync(dir, { recursive: true, force: true })
}

await main()
