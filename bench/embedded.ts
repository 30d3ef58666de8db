/**
 * The embedded default under long use (`npm run bench:embedded`; issue 16, docs/performance.md).
 * Runs `npm start` (scripts/start-local.ts, the whole platform on the embedded adapters) as a child
 * process on a fresh data folder and drives it over HTTP as a user would:
 *
 *  DISK      pushes BENCH_DISK_BATCHES batches of BENCH_DISK_RECORDS records (the same external
 *            ids every time, with a field that changes, so every record is an update and every
 *            batch publishes one `contact-changes` message per record) and prints, every few
 *            seconds, the size of the database (file + WAL) against its live rows: queue messages
 *            by topic, contacts, free pages. Disk use must follow the live rows, not the number
 *            of messages that went through.
 *  HEALTH    GET /healthz and /readyz latency (edge and worker ports), probed from a worker thread
 *            every 50 ms: idle (the control), then under load (concurrent big-batch pushes and
 *            small pushes for BENCH_HEALTH_SECONDS), then right after a SIGKILL and restart with
 *            a backlog. Prints p50 / p99 / max per phase and the ratio of the loaded p99 to the
 *            idle p99.
 *  RECOVERY  pushes batches, SIGKILLs the stack while the worker holds them, restarts it on the
 *            same folder and prints the seconds until every batch is applied (the queue is
 *            empty), against the seconds the same batches take without a crash (the control,
 *            from the last push and from the first).
 *
 * BENCH_PARTS=DISK,HEALTH,RECOVERY (default all). Sizes: BENCH_DISK_BATCHES (150),
 * BENCH_DISK_RECORDS (2000), BENCH_HEALTH_SECONDS (15), BENCH_BIG_RECORDS (5000).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { Worker } from 'node:worker_threads'
import http from 'node:http'
import { freeLocalStackPorts, localStackEnv, npmStartArgs, type LocalStackPorts } from '../scripts/lib/local-stack.ts'
import { readDemoCredentials, type DemoCredentials } from '../scripts/lib/demo-tenant.ts'

const ROOT = join(import.meta.dirname, '..')
const PARTS = new Set((process.env.BENCH_PARTS ?? 'DISK,HEALTH,RECOVERY').toUpperCase().split(','))
const DISK_BATCHES = Number(process.env.BENCH_DISK_BATCHES ?? 150)
const DISK_RECORDS = Number(process.env.BENCH_DISK_RECORDS ?? 2000)
const HEALTH_SECONDS = Number(process.env.BENCH_HEALTH_SECONDS ?? 15)
const BIG_RECORDS = Number(process.env.BENCH_BIG_RECORDS ?? 5000)
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`

type Ports = LocalStackPorts

interface Stack {
  child: ChildProcess
  exited: Promise<number | null>
  output(): string
}

/** `npm start` on `dir`, exactly as a developer runs it (its own process, its own ports); `turns`: where bench/turn-cpu.ts writes */
function startStack(dir: string, ports: Ports, turns?: string): Stack {
  const nodeOptions = [process.env.BENCH_NODE_OPTIONS, turns ? `--import ${join(ROOT, 'bench', 'turn-cpu.ts')}` : undefined].filter(Boolean).join(' ')
  const child = spawn(process.execPath, npmStartArgs(), {
    cwd: ROOT,
    env: {
      ...localStackEnv(dir, ports),
      ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
      ...(turns ? { BENCH_TURNS_FILE: turns } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (d) => (output += d))
  child.stderr!.on('data', (d) => {
    output += d
    if (process.env.BENCH_VERBOSE) process.stderr.write(d)
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, exited, output: () => output }
}

async function waitBanner(stack: Stack): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (stack.output().includes('Stop with Ctrl-C.')) return
    if (stack.child.exitCode !== null) break
    await sleep(100)
  }
  throw new Error(`npm start did not come up:\n${stack.output()}`)
}

async function stopStack(stack: Stack, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
  if (stack.child.exitCode !== null || stack.child.signalCode !== null) return
  stack.child.kill(signal)
  await Promise.race([stack.exited, sleep(15_000)])
  if (stack.child.exitCode === null && stack.child.signalCode === null) stack.child.kill('SIGKILL')
  await stack.exited
}

interface Tenant {
  creds: DemoCredentials
  host: string
  keys: string[]
}

/** API keys of a connection of its own (each key has its own push rate limit: 120 per minute). */
async function benchTenant(dir: string, ports: Ports, keyCount: number): Promise<Tenant> {
  const creds = readDemoCredentials(dir)
  if (!creds) throw new Error('no demo credentials')
  const portal = `http://127.0.0.1:${ports.portal}/api/v1/admin/accounts/${creds.account_id}`
  const headers = { authorization: `Bearer ${creds.operator_token}`, 'content-type': 'application/json' }
  const post = async (url: string, body: object) => {
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) })
    if (res.status >= 300) throw new Error(`${url}: ${res.status} ${await res.text()}`)
    return (await res.json()) as Record<string, string>
  }
  const connection = await post(`${portal}/connections`, { type: 'api', source: `bench-${Date.now().toString(36)}`, name: 'bench' })
  const keys: string[] = []
  for (let i = 0; i < keyCount; i++)
    keys.push((await post(`${portal}/connections/${connection.id}/keys`, { scopes: ['contacts:write'], name: `bench ${i}` })).key!)
  return { creds, host: `${creds.public_id}.edge.localhost`, keys }
}

function batchBody(records: number, round: number, prefix = 'ext'): string {
  const contacts = Array.from({ length: records }, (_, i) => ({
    external_id: `${prefix}-${i}`,
    email: `person.${i}@example.com`,
    first_name: `First${i}`,
    last_name: `Last${i}`,
    company: `Company ${i % 977}`,
    title: `Title round ${round}`,
    notes: 'n'.repeat(300),
  }))
  return JSON.stringify({ contacts })
}

const agent = new http.Agent({ keepAlive: true })

/** POST /v1/contacts on the edge with the tenant's host (node:http: fetch does not send a Host of our choosing). */
function push(ports: Ports, t: Tenant, key: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: ports.edge,
        path: '/v1/contacts',
        method: 'POST',
        agent,
        headers: { host: t.host, authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode!))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

interface DbSample {
  dbBytes: number
  walBytes: number
  queue: Record<string, number>
  contacts: number
  freePages: number
  pageSize: number
}

/** Reads the live rows and sizes of the stack's database from a read-only connection of our own. */
function sampleDb(dir: string): DbSample {
  const path = join(dir, 'platform.db')
  const size = (p: string) => {
    try {
      return statSync(p).size
    } catch {
      return 0
    }
  }
  const db = new DatabaseSync(path, { readOnly: true })
  try {
    db.exec('PRAGMA busy_timeout = 5000')
    const queue: Record<string, number> = {}
    for (const r of db.prepare('SELECT topic, count(*) AS n FROM queue_messages GROUP BY topic').all() as Array<{ topic: string; n: number }>)
      queue[r.topic] = r.n
    const contacts = (db.prepare('SELECT count(*) AS n FROM contacts').get() as { n: number }).n
    const freePages = (db.prepare('PRAGMA freelist_count').get() as { freelist_count: number }).freelist_count
    const pageSize = (db.prepare('PRAGMA page_size').get() as { page_size: number }).page_size
    return { dbBytes: size(path), walBytes: size(`${path}-wal`), queue, contacts, freePages, pageSize }
  } finally {
    db.close()
  }
}

const queueTotal = (s: DbSample) => Object.values(s.queue).reduce((a, b) => a + b, 0)
const fmtSample = (t0: number, s: DbSample, pushed: number) =>
  `${((performance.now() - t0) / 1000).toFixed(0).padStart(5)} s  pushed ${String(pushed).padStart(8)}  db ${mb(s.dbBytes).padStart(9)}  wal ${mb(s.walBytes).padStart(8)}  free ${mb(s.freePages * s.pageSize).padStart(8)}  contacts ${String(s.contacts).padStart(6)}  queue ${JSON.stringify(s.queue)}`

async function disk(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'lsv-bench-disk-'))
  const ports = await freeLocalStackPorts()
  const stack = startStack(dir, ports)
  try {
    await waitBanner(stack)
    const t = await benchTenant(dir, ports, 4)
    console.log(`DISK: ${DISK_BATCHES} batches x ${DISK_RECORDS} records (the same ${DISK_RECORDS} contacts, each batch changes all of them)`)
    const t0 = performance.now()
    let pushed = 0
    let sent = 0
    let stopSampling = false
    const samples: DbSample[] = []
    const sampler = (async () => {
      while (!stopSampling) {
        const s = sampleDb(dir)
        samples.push(s)
        console.log(fmtSample(t0, s, pushed))
        await sleep(5000)
      }
    })()
    // four pushers, one key each; a 429 (the key's 120 per minute) is waited out
    await Promise.all(
      t.keys.map(async (key) => {
        while (sent < DISK_BATCHES) {
          const round = sent++
          for (;;) {
            const status = await push(ports, t, key, batchBody(DISK_RECORDS, round))
            if (status === 202) break
            if (status !== 429 && status !== 503) throw new Error(`push answered ${status}`)
            await sleep(1000)
          }
          pushed += DISK_RECORDS
        }
      }),
    )
    const pushSeconds = (performance.now() - t0) / 1000
    // drained: no contact-batches left
    for (let i = 0; i < 3600; i++) {
      const s = sampleDb(dir)
      if ((s.queue['contact-batches'] ?? 0) === 0) break
      await sleep(1000)
    }
    // give maintenance (sweeps, page release) a minute to act on the drained queue
    await sleep(Number(process.env.BENCH_DISK_SETTLE_MS ?? 60_000))
    stopSampling = true
    await sampler
    const end = sampleDb(dir)
    console.log(fmtSample(t0, end, pushed))
    const peak = Math.max(...samples.map((s) => s.dbBytes + s.walBytes))
    console.log(
      `DISK: ${pushed} records (${DISK_BATCHES} batches) pushed in ${pushSeconds.toFixed(0)} s; at the end: db ${mb(end.dbBytes)} + wal ${mb(end.walBytes)}, ` +
        `${queueTotal(end)} queue rows, ${end.contacts} contacts; peak db+wal ${mb(peak)}`,
    )
  } finally {
    await stopStack(stack)
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Probes GET <url> every `everyMs` from a worker thread (the bench's own event loop must not add to the figure). */
function startProbe(urls: string[], everyMs: number): { stop(): Promise<Array<{ url: string; at: number; ms: number; status: number }>> } {
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads')
    const http = require('node:http')
    const results = []
    let stopped = false
    const once = (url) => new Promise((resolve) => {
      const start = performance.now()
      const req = http.get(url, { agent: false, timeout: 10000 }, (res) => {
        res.resume()
        res.on('end', () => resolve({ url, at: Date.now(), ms: performance.now() - start, status: res.statusCode }))
      })
      req.on('timeout', () => req.destroy(new Error('timeout')))
      req.on('error', () => resolve({ url, at: Date.now(), ms: performance.now() - start, status: 0 }))
    })
    ;(async () => {
      while (!stopped) {
        const t = performance.now()
        const got = await Promise.all(workerData.urls.map(once))
        results.push(...got)
        const wait = workerData.everyMs - (performance.now() - t)
        if (wait > 0) await new Promise((r) => setTimeout(r, wait))
      }
      parentPort.postMessage(results)
    })()
    parentPort.on('message', () => { stopped = true })
  `,
    { eval: true, workerData: { urls, everyMs } },
  )
  return {
    stop: () =>
      new Promise((resolve) => {
        worker.once('message', (results) => {
          void worker.terminate()
          resolve(results)
        })
        worker.postMessage('stop')
      }),
  }
}

const quantile = (xs: number[], q: number) => {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!
}
function report(label: string, results: Array<{ url: string; ms: number; status: number }>): { p99: number } {
  const byPath = new Map<string, typeof results>()
  for (const r of results) {
    const path = `${new URL(r.url).pathname}:${new URL(r.url).port}`
    byPath.set(path, [...(byPath.get(path) ?? []), r])
  }
  const all = results.filter((r) => r.status !== 0).map((r) => r.ms)
  for (const [path, rs] of byPath) {
    const ms = rs.filter((r) => r.status !== 0).map((r) => r.ms)
    const statuses = [...new Set(rs.map((r) => r.status))].join('/')
    console.log(
      `  ${label.padEnd(28)} ${path.padEnd(14)} n=${String(rs.length).padStart(4)}  p50 ${quantile(ms, 0.5).toFixed(1).padStart(7)} ms  p99 ${quantile(ms, 0.99).toFixed(1).padStart(7)} ms  max ${Math.max(
        ...ms,
      )
        .toFixed(1)
        .padStart(7)} ms  status ${statuses}`,
    )
  }
  return { p99: quantile(all, 0.99) }
}

/** Main-thread CPU per event-loop turn between `from` and `to` (epoch ms), from bench/turn-cpu.ts's lines. */
function turnCpu(file: string, from: number, to: number): { turns: number; p99: number; max: number } {
  let text = ''
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    /* none yet */
  }
  let turns = 0
  const long: number[] = []
  for (const line of text.split('\n')) {
    if (!line) continue
    const r = JSON.parse(line) as { at: number; turns: number; long: number[] }
    if (r.at < from || r.at > to + 1000) continue
    turns += r.turns
    long.push(...r.long)
  }
  long.sort((a, b) => b - a)
  // the 1 % longest turns: below 1 ms when fewer than 1 % took that long
  const p99 = long[Math.floor(turns * 0.01)] ?? 0.5
  return { turns, p99, max: long[0] ?? 0.5 }
}
const fmtTurns = (t: ReturnType<typeof turnCpu>) =>
  `main-thread CPU per event-loop turn: p99 ${t.p99 < 1 ? '< 1' : t.p99.toFixed(0)} ms, max ${t.max.toFixed(0)} ms (${t.turns} turns)`

async function health(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'lsv-bench-health-'))
  const turns = `${dir}.turns.jsonl`
  const ports = await freeLocalStackPorts()
  let stack = startStack(dir, ports, turns)
  try {
    await waitBanner(stack)
    const t = await benchTenant(dir, ports, 12)
    const urls = [
      `http://127.0.0.1:${ports.edge}/healthz`,
      `http://127.0.0.1:${ports.edge}/readyz`,
      `http://127.0.0.1:${ports.worker}/healthz`,
      `http://127.0.0.1:${ports.worker}/readyz`,
    ]
    console.log(`HEALTH: probes every 50 ms; load = 4 loops of ${BIG_RECORDS}-record batches + 8 loops of 1-record pushes for ${HEALTH_SECONDS} s`)
    let probe = startProbe(urls, 50)
    let from = Date.now()
    await sleep(3000)
    const idle = report('idle (control)', await probe.stop())
    console.log(`  idle: ${fmtTurns(turnCpu(turns, from, Date.now()))}`)

    probe = startProbe(urls, 50)
    from = Date.now()
    const until = performance.now() + HEALTH_SECONDS * 1000
    const statuses = new Map<number, number>()
    const count = (s: number) => statuses.set(s, (statuses.get(s) ?? 0) + 1)
    let round = 0
    const big = batchBody(BIG_RECORDS, 0, 'big')
    await Promise.all([
      ...t.keys.slice(0, 4).map(async (key) => {
        while (performance.now() < until) count(await push(ports, t, key, round++ % 2 ? big : batchBody(BIG_RECORDS, round, 'big')))
      }),
      ...t.keys.slice(4).map(async (key, i) => {
        const small = JSON.stringify({ contacts: [{ external_id: `small-${i}`, email: `s${i}@example.com` }] })
        while (performance.now() < until) count(await push(ports, t, key, small))
      }),
    ])
    const loaded = report('under load', await probe.stop())
    const loadedTurns = turnCpu(turns, from, Date.now())
    console.log(`  under load: ${fmtTurns(loadedTurns)}`)
    console.log(`  pushes answered: ${[...statuses].map(([s, n]) => `${n} x ${s}`).join(', ')}`)
    console.log(`HEALTH: p99 under load / p99 idle = ${(loaded.p99 / idle.p99).toFixed(1)}x (${loaded.p99.toFixed(1)} vs ${idle.p99.toFixed(1)} ms)`)

    // a backlog, then a crash and a restart on the same folder: probes from the first answer on
    for (let i = 0; i < 8; i++) await push(ports, t, t.keys[i % 4]!, batchBody(BIG_RECORDS, 1000 + i, 'big'))
    await stopStack(stack, 'SIGKILL')
    stack = startStack(dir, ports, turns)
    probe = startProbe(urls, 50)
    await waitBanner(stack)
    from = Date.now()
    await sleep(10_000)
    const restarted = (await probe.stop()).filter((r) => r.status !== 0)
    report('first 10 s after a restart', restarted)
    console.log(`  first 10 s after a restart: ${fmtTurns(turnCpu(turns, from, Date.now()))}`)
  } finally {
    await stopStack(stack)
    rmSync(dir, { recursive: true, force: true })
    rmSync(turns, { force: true })
  }
}

/** Seconds until the stack on `dir` has applied every pushed batch (no contact-batches rows left). */
async function secondsToDrain(dir: string, from: number): Promise<number> {
  for (;;) {
    const s = sampleDb(dir)
    if ((s.queue['contact-batches'] ?? 0) === 0) return (performance.now() - from) / 1000
    await sleep(100)
  }
}

/** batches leased right now (a worker is on them) */
function leased(dir: string): number {
  const db = new DatabaseSync(join(dir, 'platform.db'), { readOnly: true })
  try {
    db.exec('PRAGMA busy_timeout = 5000')
    return (
      db.prepare("SELECT count(*) AS n FROM queue_messages WHERE topic = 'contact-batches' AND lease_token IS NOT NULL AND visible_at > ?").get(Date.now()) as {
        n: number
      }
    ).n
  } finally {
    db.close()
  }
}

async function recovery(): Promise<void> {
  const BATCHES = 8
  console.log(`RECOVERY: ${BATCHES} batches of ${BIG_RECORDS} records; SIGKILL while the worker holds batches, restart on the same folder`)
  const runs: Array<{ crash: number; restart: number; control: number }> = []
  for (let round = 0; round < Number(process.env.BENCH_ROUNDS ?? 3); round++) {
    const figures: Record<string, number> = {}
    for (const mode of round % 2 === 0 ? ['control', 'crash'] : ['crash', 'control']) {
      const dir = mkdtempSync(join(tmpdir(), 'lsv-bench-recovery-'))
      const ports = await freeLocalStackPorts()
      let stack = startStack(dir, ports)
      try {
        await waitBanner(stack)
        const t = await benchTenant(dir, ports, 4)
        const firstPush = performance.now()
        for (let i = 0; i < BATCHES; i++) await push(ports, t, t.keys[i % 4]!, batchBody(BIG_RECORDS, i, `r${i}`))
        const pushed = performance.now()
        if (mode === 'control') {
          figures.control = await secondsToDrain(dir, pushed)
          // a stack that applies batches while it accepts pushes answers them later and has less
          // left after the last one: from the first push is the figure that compares throughput
          figures.controlFromFirst = figures.control + (pushed - firstPush) / 1000
          continue
        }
        for (let i = 0; i < 600 && leased(dir) === 0; i++) await sleep(50)
        figures.backlog = sampleDb(dir).queue['contact-batches'] ?? 0
        await stopStack(stack, 'SIGKILL')
        const killed = performance.now()
        stack = startStack(dir, ports)
        await waitBanner(stack)
        figures.restart = (performance.now() - killed) / 1000
        figures.crash = await secondsToDrain(dir, killed)
      } finally {
        await stopStack(stack)
        rmSync(dir, { recursive: true, force: true })
      }
    }
    runs.push({ crash: figures.crash!, restart: figures.restart!, control: figures.control! })
    console.log(
      `  round ${round + 1}: SIGKILL with ${figures.backlog} of ${BATCHES} batches queued -> every batch applied ${figures.crash!.toFixed(1)} s (restart ${figures.restart!.toFixed(1)} s of it); ` +
        `without a crash, last push -> every batch applied ${figures.control!.toFixed(1)} s (first push -> ${figures.controlFromFirst!.toFixed(1)} s)`,
    )
  }
  const med = (k: 'crash' | 'restart' | 'control') =>
    quantile(
      runs.map((r) => r[k]),
      0.5,
    )
  console.log(
    `RECOVERY: median ${med('crash').toFixed(1)} s from the SIGKILL to an empty queue (restart ${med('restart').toFixed(1)} s), ` +
      `${med('control').toFixed(1)} s without a crash: the crash costs ${(med('crash') - med('control')).toFixed(1)} s`,
  )
}

console.log(`bench:embedded (node ${process.version}, parts ${[...PARTS].join(',')})`)
if (PARTS.has('DISK')) await disk()
if (PARTS.has('HEALTH')) await health()
if (PARTS.has('RECOVERY')) await recovery()
