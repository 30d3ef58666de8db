/**
 * The figures users feel (`npm run bench:latency`; issue 15, docs/performance.md): end-to-end
 * latency through the public doors only, p50 and p99, on the embedded stack (`npm start`,
 * scripts/start-local.ts) and on the deployed-shape stack (`npm run start:cloud`,
 * scripts/start-cloud.ts, on the Firestore and Pub/Sub emulators), each started here as a child
 * process on a fresh data folder and free ports, one measurement at a time (no other load):
 *
 *  ONE    push to visible, 1 record: from the 202 of `POST /v1/contacts` on the edge to the first
 *         200 of `GET /api/v1/contacts/{id}` (the read contract), polled back to back
 *         (BENCH_POLL_MS pause between a 404 and the next poll).
 *  BATCH  push to visible, 10,000 records: from the 202 of one batch to the moment every record
 *         has been seen through `GET /api/v1/contacts` (keyset pages). Each batch goes to a fresh
 *         account, its records ordered by contact id, so the list's key order is the batch's
 *         order: a scan follows the worker's frontier and reads each contact about once
 *         (`limit` 100 while the frontier moves, 10 while it waits). A record counts as visible
 *         when a page first shows it; the figure is the last of those times, an upper bound (a
 *         record is never seen before it is readable). One smaller batch first is not counted.
 *         On start:cloud the list is slow on the Firestore emulator (about 1 s a page of 100 on
 *         the development VM), so there the figure is bounded by the reads; the relay's log line
 *         (below) says when the worker had written every record (it answers the push after).
 *  VISIT  visit to delivery: from sending `POST /api/v1/admin/accounts/{id}/visits` (a person the
 *         dispatcher has not seen, as the identification pipeline sends it: `resolution`) to the
 *         200 of a receiver on 127.0.0.1 that an active v2 integration of the account points at.
 *
 * The read contract allows 120 reads and 120 pushes a minute per key, so the bench mints keys
 * through the management API (OPERATOR_TOKEN of the stack's demo tenant) before each measurement
 * and uses each for at most 100 calls.
 *
 * Goals (issue 15) for the embedded stack: push to visible p99 < 250 ms (1 record) and < 3 s
 * (10,000 records); visit to delivery p99 < 250 ms. The deployed shape's figures are printed for
 * information (emulators on this machine, not Google Cloud).
 *
 * BENCH_STACKS=embedded,cloud (default both); BENCH_PARTS=ONE,BATCH,VISIT (default all); sizes
 * BENCH_ONE_SAMPLES (40), BENCH_BATCH_SAMPLES (3), BENCH_BATCH_RECORDS (10000),
 * BENCH_VISIT_SAMPLES (40), BENCH_POLL_MS (2). FIRESTORE_EMULATOR_HOST / PUBSUB_EMULATOR_HOST:
 * running emulators for the cloud stack, else it starts its own and stops them by pid.
 * BENCH_NODE_OPTIONS is given to the embedded stack (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`);
 * BENCH_KEEP_DATA=1 keeps the stacks' data folders (start:cloud's logs/ included).
 * On start:cloud each part also prints, from the push relay's log, when the Pub/Sub push reached
 * the service and when the service answered it (the worker answers once every write committed).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { freeLocalStackPorts, localStackEnv, npmStartArgs, type LocalStackPorts } from '../scripts/lib/local-stack.ts'
import { killTree } from '../scripts/lib/process-tree.ts'
import { readDemoCredentials, type DemoCredentials } from '../scripts/lib/demo-tenant.ts'
import type { RelayLogLine } from '../scripts/lib/cloud/push-relay.ts'
import { contactIdFor } from '../shared/src/model/ids.ts'
import { benchEmulators, type BenchEmulators } from './lib/emulators.ts'

const ROOT = join(import.meta.dirname, '..')
const STACKS = (process.env.BENCH_STACKS ?? 'embedded,cloud').toLowerCase().split(',')
const PARTS = new Set((process.env.BENCH_PARTS ?? 'ONE,BATCH,VISIT').toUpperCase().split(','))
const ONE_SAMPLES = Number(process.env.BENCH_ONE_SAMPLES ?? 40)
const BATCH_SAMPLES = Number(process.env.BENCH_BATCH_SAMPLES ?? 3)
const BATCH_RECORDS = Number(process.env.BENCH_BATCH_RECORDS ?? 10_000)
const VISIT_SAMPLES = Number(process.env.BENCH_VISIT_SAMPLES ?? 40)
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 2)
/** pause before asking again for a list page that did not move the frontier */
const PAGE_POLL_MS = 20
/** calls per minted key: under the 120-per-minute windows of pushes and reads, whatever their alignment */
const USES_PER_KEY = 100

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))
const rand = (bytes = 4) => randomBytes(bytes).toString('hex')
/** nearest rank: the smallest sample with at least q of the samples at or below it (p99 of 40 samples is the largest) */
function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.max(0, Math.ceil(q * s.length) - 1)]!
}
const ms = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(1)} ms`)

// ---------------------------------------------------------------------------------------------
// HTTP as a client does it: keep-alive, any Host header (the edge routes by it)

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 })

interface Answer {
  status: number
  body: string
}

function call(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (d: Buffer) => chunks.push(d))
        res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8') }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

function must(answer: Answer, what: string, status: number): Record<string, unknown> {
  if (answer.status !== status) throw new Error(`${what}: answered ${answer.status} ${answer.body.slice(0, 300)}`)
  return answer.body ? (JSON.parse(answer.body) as Record<string, unknown>) : {}
}

// ---------------------------------------------------------------------------------------------
// the stacks

type Ports = LocalStackPorts

interface Stack {
  name: 'embedded' | 'cloud'
  ports: Ports
  creds: DemoCredentials
  /** `<public_id>.edge.localhost:<port>`, the edge host of an account */
  edgeHost(publicId: string): string
  /** start:cloud only: the push relay's log (when each Pub/Sub push reached it, how long the service took to answer) */
  relayLog?(): RelayLogLine[]
  stop(): Promise<void>
}

function spawnStack(args: string[], env: Record<string, string | undefined>): { child: ChildProcess; output(): string; exited: Promise<void> } {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', (d) => (output += d))
  child.stderr!.on('data', (d) => {
    output += d
    if (process.env.BENCH_VERBOSE) process.stderr.write(d)
  })
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  return { child, output: () => output, exited }
}

async function waitBanner(stack: { child: ChildProcess; output(): string }, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (stack.output().includes('Stop with Ctrl-C.')) return
    if (stack.child.exitCode !== null) break
    await sleep(200)
  }
  throw new Error(`${what} did not come up:\n${stack.output().slice(-4000)}`)
}

/** SIGTERM (both stacks drain and stop what they started), then the whole tree by pid if it lingers. */
async function stopChild(child: ChildProcess, exited: Promise<void>, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill('SIGTERM')
  await Promise.race([exited, sleep(graceMs)])
  if (child.exitCode === null && child.signalCode === null && child.pid) await killTree(child.pid)
}

/** `npm start` on a fresh DATA_DIR, as bench/embedded.ts runs it. */
async function startEmbedded(): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), 'lsv-bench-latency-'))
  const ports = await freeLocalStackPorts()
  const run = spawnStack(npmStartArgs(), {
    ...localStackEnv(dir, ports),
    ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
  })
  const stop = async () => {
    await stopChild(run.child, run.exited, 20_000)
    if (process.env.BENCH_KEEP_DATA) console.log(`[embedded] data kept in ${dir}`)
    else rmSync(dir, { recursive: true, force: true })
  }
  try {
    await waitBanner(run, 'npm start', 120_000)
    const creds = readDemoCredentials(dir)
    if (!creds) throw new Error('npm start wrote no demo credentials')
    console.log(`[embedded] npm start (scripts/start-local.ts, pid ${run.child.pid}) on ${dir}, edge :${ports.edge}, portal :${ports.portal}`)
    return { name: 'embedded', ports, creds, edgeHost: (p) => `${p}.edge.localhost:${ports.edge}`, stop }
  } catch (err) {
    await stop()
    throw err
  }
}

/** `npm run start:cloud` (four service processes, push relay, stand-ins) on the emulators. */
async function startCloud(): Promise<Stack> {
  const project = `demo-bench-${rand(3)}`
  const emulators: BenchEmulators = await benchEmulators(['firestore', 'pubsub'], project)
  if (emulators.started.length > 0) console.log(`[cloud] started ${emulators.started.join(', ')}`)
  const dir = mkdtempSync(join(tmpdir(), 'lsv-bench-latency-cloud-'))
  const ports = await freeLocalStackPorts()
  let run: ReturnType<typeof spawnStack> | null = null
  const stop = async () => {
    if (run) await stopChild(run.child, run.exited, 40_000)
    await emulators.stop()
    // logs/ holds each service's log and the push relay's
    if (process.env.BENCH_KEEP_DATA) console.log(`[cloud] data and logs kept in ${dir}`)
    else rmSync(dir, { recursive: true, force: true })
  }
  try {
    run = spawnStack(['scripts/start-cloud.ts'], {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      FIRESTORE_EMULATOR_HOST: emulators.firestore,
      PUBSUB_EMULATOR_HOST: emulators.pubsub,
      GOOGLE_CLOUD_PROJECT: project,
      CLOUD_DATA_DIR: dir,
      EDGE_PORT: String(ports.edge),
      PORTAL_PORT: String(ports.portal),
      UPSERT_WORKER_PORT: String(ports.worker),
      WEBHOOK_DISPATCHER_PORT: String(ports.dispatcher),
    })
    await waitBanner(run, 'npm run start:cloud', 180_000)
    const creds = readDemoCredentials(dir)
    if (!creds) throw new Error('start:cloud wrote no demo credentials')
    console.log(
      `[cloud] npm run start:cloud (scripts/start-cloud.ts, pid ${run.child.pid}) on ${dir}, emulators ${emulators.firestore} ${emulators.pubsub}, edge :${ports.edge}, portal :${ports.portal}`,
    )
    const relayLog = () => {
      const file = join(dir, 'logs', 'push-relay.log')
      if (!existsSync(file)) return []
      return readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as RelayLogLine)
    }
    return { name: 'cloud', ports, creds, edgeHost: (p) => `${p}.edge.localhost:${ports.edge}`, relayLog, stop }
  } catch (err) {
    await stop()
    throw err
  }
}

// ---------------------------------------------------------------------------------------------
// tenants, through the management API

class Admin {
  private readonly headers: Record<string, string>
  private readonly stack: Stack
  constructor(stack: Stack) {
    this.stack = stack
    this.headers = { authorization: `Bearer ${stack.creds.operator_token}` }
  }
  private async post(path: string, body: object, status = 201): Promise<Record<string, unknown>> {
    return must(await call(this.stack.ports.portal, 'POST', `/api/v1/admin${path}`, this.headers, JSON.stringify(body)), `POST ${path}`, status)
  }
  async account(publicId: string): Promise<string> {
    return (await this.post('/accounts', { public_id: publicId, name: 'latency bench' })).id as string
  }
  async connection(accountId: string, source: string): Promise<string> {
    return (await this.post(`/accounts/${accountId}/connections`, { type: 'api', source, name: 'latency bench' })).id as string
  }
  async key(accountId: string, connectionId: string, scope: 'contacts:write' | 'contacts:read'): Promise<string> {
    return (await this.post(`/accounts/${accountId}/connections/${connectionId}/keys`, { scopes: [scope], name: `latency bench ${scope}` })).key as string
  }
  async integration(accountId: string, url: string): Promise<string> {
    return (await this.post(`/accounts/${accountId}/integrations`, { url, payload_version: 2 })).id as string
  }
  async visit(accountId: string, event: object): Promise<Answer> {
    return call(this.stack.ports.portal, 'POST', `/api/v1/admin/accounts/${accountId}/visits`, this.headers, JSON.stringify(event))
  }
}

/** Keys of one scope, each used for at most USES_PER_KEY calls; `ensure` mints ahead, outside the timed part. */
class KeyPool {
  private readonly keys: Array<{ key: string; uses: number }> = []
  private readonly mint: () => Promise<string>
  constructor(mint: () => Promise<string>) {
    this.mint = mint
  }
  private spare(): number {
    return this.keys.reduce((n, k) => n + USES_PER_KEY - k.uses, 0)
  }
  async ensure(calls: number): Promise<void> {
    while (this.spare() < calls) {
      const batch = Math.min(8, Math.ceil((calls - this.spare()) / USES_PER_KEY))
      this.keys.push(...(await Promise.all(Array.from({ length: batch }, () => this.mint()))).map((key) => ({ key, uses: 0 })))
    }
  }
  async take(): Promise<string> {
    while (this.keys.length > 0 && this.keys[0]!.uses >= USES_PER_KEY) this.keys.shift()
    if (this.keys.length === 0) await this.ensure(1) // only when ensure() was too low: counted in the figure
    const k = this.keys[0]!
    k.uses++
    return k.key
  }
}

interface Tenant {
  accountId: string
  publicId: string
  source: string
  pushes: KeyPool
  reads: KeyPool
}

async function benchTenant(admin: Admin, accountId: string, publicId: string): Promise<Tenant> {
  const source = `bench-${rand(3)}`
  const connectionId = await admin.connection(accountId, source)
  return {
    accountId,
    publicId,
    source,
    pushes: new KeyPool(() => admin.key(accountId, connectionId, 'contacts:write')),
    reads: new KeyPool(() => admin.key(accountId, connectionId, 'contacts:read')),
  }
}

async function push(stack: Stack, t: Tenant, body: string): Promise<void> {
  const key = await t.pushes.take()
  must(await call(stack.ports.edge, 'POST', '/v1/contacts', { host: stack.edgeHost(t.publicId), authorization: `Bearer ${key}` }, body), 'push', 202)
}

// ---------------------------------------------------------------------------------------------
// the measurements

interface Figures {
  samples: number[]
  notes: string[]
}

/**
 * start:cloud: where a sample's time went between the Pub/Sub emulator and the service. For each
 * sample (in order; `sent`: wall clock when its request left, `origin`: what the figures count
 * from) the first accepted push of `subscription` the relay received between its `sent` and the
 * next sample's: when it reached the relay, and how long the service took to answer it. (A push
 * may reach the relay before the 202 reaches the bench.)
 */
function pushAttribution(stack: Stack, subscription: string, starts: Array<{ sent: number; origin: number }>, from: string): string | null {
  if (!stack.relayLog) return null
  const lines = stack
    .relayLog()
    .filter((l) => l.subscription === subscription)
    .map((l) => ({ at: Date.parse(l.time), ms: l.ms, status: l.status }))
  const arrived: number[] = []
  const took: number[] = []
  const answered: number[] = []
  let pushes = 0
  starts.forEach(({ sent, origin: start }, i) => {
    const end = starts[i + 1]?.sent ?? Infinity
    const mine = lines.filter((l) => l.at >= sent && l.at < end)
    pushes += mine.length
    const ok = mine.find((l) => l.status < 300)
    if (ok) {
      arrived.push(ok.at - start)
      took.push(ok.ms)
      answered.push(ok.at + ok.ms - start)
    }
  })
  if (arrived.length === 0) return `no ${subscription} push found in the relay log`
  const q = (xs: number[]) => `p50 ${ms(quantile(xs, 0.5))}, p99 ${ms(quantile(xs, 0.99))}`
  return (
    `${subscription} (push relay log): the accepted push reached the service ${q(arrived)} after ${from}; the service took ${q(took)} to answer it, ` +
    `so it had answered ${q(answered)} after ${from}; ${pushes} pushes for ${starts.length} samples`
  )
}

async function oneRecord(stack: Stack, admin: Admin): Promise<Figures> {
  const t = await benchTenant(admin, stack.creds.account_id, stack.creds.public_id)
  const samples: number[] = []
  const accepts: number[] = []
  const walls: Array<{ sent: number; origin: number }> = []
  let polls = 0
  for (let s = -3; s < ONE_SAMPLES; s++) {
    // three warm-up pushes, not counted
    await t.pushes.ensure(1)
    await t.reads.ensure(400)
    const externalId = `one-${s}-${rand()}`
    const id = contactIdFor(t.accountId, t.source, externalId)
    const body = JSON.stringify({
      contacts: [{ external_id: externalId, email: `${externalId}@example.com`, first_name: 'Ada', last_name: 'Lovelace', company: 'Acme', title: 'CTO' }],
    })
    const sentWall = Date.now()
    const sent = performance.now()
    await push(stack, t, body)
    const accepted = performance.now()
    const acceptedWall = Date.now()
    let n = 0
    for (;;) {
      n++
      const res = await call(stack.ports.portal, 'GET', `/api/v1/contacts/${id}`, { authorization: `Bearer ${await t.reads.take()}` })
      if (res.status === 200) break
      if (res.status !== 404) throw new Error(`GET /api/v1/contacts/${id}: ${res.status} ${res.body.slice(0, 200)}`)
      if (performance.now() - accepted > 60_000) throw new Error(`contact ${id} not readable within 60 s`)
      await sleep(POLL_MS)
    }
    const visible = performance.now()
    if (s >= 0) {
      samples.push(visible - accepted)
      accepts.push(accepted - sent)
      walls.push({ sent: sentWall, origin: acceptedWall })
      polls += n
    }
    await sleep(20 + Math.random() * 30)
  }
  const notes = [`the 202 itself p50 ${ms(quantile(accepts, 0.5))}`, `${(polls / ONE_SAMPLES).toFixed(1)} polls per sample`]
  const where = pushAttribution(stack, 'contact-batches-push', walls, 'the 202')
  if (where) notes.push(where)
  return { samples, notes }
}

/** One batch into a fresh account; seconds from its 202 until every record was seen in the list. */
async function oneBatch(
  stack: Stack,
  admin: Admin,
  n: number,
  size: number,
): Promise<{ visible: number; accepted: number; first: number; pages: number; contactsRead: number; walls: { sent: number; origin: number } }> {
  const publicId = `bench-${rand(4)}`
  const accountId = await admin.account(publicId)
  const t = await benchTenant(admin, accountId, publicId)
  await t.pushes.ensure(1)
  await t.reads.ensure(1200)
  // records in contact-id order: the list's keyset order is then the order the worker applies them
  const records = Array.from({ length: size }, (_, i) => {
    const externalId = `b${n}-${i}`
    return {
      id: contactIdFor(accountId, t.source, externalId),
      record: {
        external_id: externalId,
        email: `p${i}.b${n}@example.com`,
        first_name: `First${i}`,
        last_name: `Last${i}`,
        company: `Company ${i % 977}`,
        title: 'Head of Things',
      },
    }
  }).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  const expected = records.map((r) => r.id)
  const position = new Map(expected.map((id, i) => [id, i]))
  const body = JSON.stringify({ contacts: records.map((r) => r.record) })
  const seenAt = new Float64Array(expected.length)
  const sentWall = Date.now()
  const sent = performance.now()
  await push(stack, t, body)
  const accepted = performance.now()
  const acceptedWall = Date.now()

  // the frontier: `cursor` (a next_cursor the list gave) points just after expected[cursorPos - 1],
  // and every expected id before cursorPos has been seen
  let cursorPos = 0
  let cursor: string | null = null
  let seen = 0
  let limit = 100
  let pages = 0
  let contactsRead = 0
  while (seen < expected.length) {
    if (performance.now() - accepted > 300_000) throw new Error(`batch not readable within 300 s (${seen} of ${expected.length} seen)`)
    const query = `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
    const page = must(
      await call(stack.ports.portal, 'GET', `/api/v1/contacts?${query}`, { authorization: `Bearer ${await t.reads.take()}` }),
      'GET /api/v1/contacts',
      200,
    ) as { data: Array<{ id: string }>; next_cursor: string | null }
    const at = performance.now()
    pages++
    contactsRead += page.data.length
    for (const c of page.data) {
      const p = position.get(c.id)
      if (p === undefined) throw new Error(`a contact the batch did not hold: ${c.id}`)
      if (seenAt[p] === 0) {
        seenAt[p] = at
        seen++
      }
    }
    if (seen === expected.length) break
    // move the cursor to the page's end when every expected id up to there has been seen (the
    // list gives a cursor only when more contacts follow: a short last page is asked again)
    let moved = false
    const last = page.data.at(-1)
    if (last && page.next_cursor) {
      const end = position.get(last.id)! + 1
      let q = cursorPos
      while (q < end && seenAt[q] !== 0) q++
      if (q === end) {
        cursorPos = end
        cursor = page.next_cursor
        moved = true
      }
    }
    // a moving frontier reads on at full pages; a waiting one asks for a few contacts, a little later
    limit = moved ? 100 : 10
    if (!moved) await sleep(PAGE_POLL_MS)
  }
  let lastSeen = 0
  let firstSeen = Infinity
  for (const t2 of seenAt) {
    lastSeen = Math.max(lastSeen, t2)
    firstSeen = Math.min(firstSeen, t2)
  }
  return {
    visible: lastSeen - accepted,
    accepted: accepted - sent,
    first: firstSeen - accepted,
    pages,
    contactsRead,
    walls: { sent: sentWall, origin: acceptedWall },
  }
}

async function batches(stack: Stack, admin: Admin): Promise<Figures> {
  const samples: number[] = []
  const notes: string[] = []
  const walls: Array<{ sent: number; origin: number }> = []
  // one smaller batch first, not counted: the first batch of a fresh process pays for compiling the path
  await oneBatch(stack, admin, -1, Math.min(2000, BATCH_RECORDS))
  for (let n = 0; n < BATCH_SAMPLES; n++) {
    const r = await oneBatch(stack, admin, n, BATCH_RECORDS)
    samples.push(r.visible)
    walls.push(r.walls)
    notes.push(
      `batch ${n + 1}: 202 after ${ms(r.accepted)}, first record readable ${ms(r.first)} after it, all ${ms(r.visible)}; ${r.pages} pages, ${r.contactsRead} contacts read`,
    )
    await sleep(500)
  }
  const where = pushAttribution(stack, 'contact-batches-push', walls, 'the 202')
  if (where) notes.push(where)
  return { samples, notes }
}

interface Receiver {
  url: string
  arrived(id: string): Promise<number>
  close(): Promise<void>
}

/** A webhook receiver on 127.0.0.1: answers 200 once the body is in and notes when, by `webhook-id`. */
async function startReceiver(): Promise<Receiver> {
  const at = new Map<string, number>()
  const waiting = new Map<string, (t: number) => void>()
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok')
      const t = performance.now()
      const id = String(req.headers['webhook-id'] ?? '')
      if (!at.has(id)) at.set(id, t)
      waiting.get(id)?.(t)
    })
  })
  server.keepAliveTimeout = 30_000
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/hook`,
    arrived: (id) => {
      const known = at.get(id)
      if (known !== undefined) return Promise.resolve(known)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no delivery of ${id} within 60 s`)), 60_000)
        waiting.set(id, (t) => {
          clearTimeout(timer)
          resolve(t)
        })
      })
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}

async function visits(stack: Stack, admin: Admin): Promise<Figures> {
  const receiver = await startReceiver()
  try {
    await admin.integration(stack.creds.account_id, receiver.url)
    const samples: number[] = []
    const accepts: number[] = []
    const walls: Array<{ sent: number; origin: number }> = []
    for (let s = -3; s < VISIT_SAMPLES; s++) {
      // three warm-up visits, not counted
      const id = `vis_${rand(8)}`
      const who = rand(4)
      const event = {
        id,
        tier: 'person',
        visit: { captured_url: 'https://example.com/pricing', visitor_id: `v-${who}`, seen_at: new Date().toISOString() },
        resolution: {
          identity: { first_name: 'Grace', last_name: `Hopper${who}`, title: 'Rear Admiral', network_url: `https://network.example/in/grace-${who}` },
          company: { name: 'Navy', domain: 'navy.example' },
          handles: { business_email: `grace.${who}@navy.example` },
          resolved_by: 'bench',
        },
      }
      const sent = performance.now()
      const wall = Date.now()
      const answer = await admin.visit(stack.creds.account_id, event)
      const accepted = performance.now()
      must(answer, 'POST visits', 202)
      const delivered = await receiver.arrived(id)
      if (s >= 0) {
        samples.push(delivered - sent)
        accepts.push(accepted - sent)
        walls.push({ sent: wall, origin: wall })
      }
      await sleep(20 + Math.random() * 30)
    }
    const notes = [`the 202 of the visit route p50 ${ms(quantile(accepts, 0.5))}`]
    const where = pushAttribution(stack, 'visit-events-push', walls, 'the visit was sent')
    if (where) notes.push(where)
    return { samples, notes }
  } finally {
    await receiver.close()
  }
}

// ---------------------------------------------------------------------------------------------

interface Row {
  stack: string
  what: string
  figures: Figures
  goalMs?: number
}

function print(row: Row): void {
  const { samples, notes } = row.figures
  console.log(
    `  ${row.what.padEnd(34)} n=${String(samples.length).padStart(3)}  p50 ${ms(quantile(samples, 0.5)).padStart(9)}  p99 ${ms(quantile(samples, 0.99)).padStart(9)}  max ${ms(Math.max(...samples)).padStart(9)}`,
  )
  for (const note of notes) console.log(`      ${note}`)
}

async function measure(stack: Stack): Promise<Row[]> {
  const admin = new Admin(stack)
  const rows: Row[] = []
  const run = async (part: string, what: string, goalMs: number, f: () => Promise<Figures>) => {
    if (!PARTS.has(part)) return
    const row: Row = { stack: stack.name, what, figures: await f(), goalMs }
    print(row)
    rows.push(row)
  }
  await run('ONE', 'push to visible, 1 record', 250, () => oneRecord(stack, admin))
  await run('BATCH', `push to visible, ${BATCH_RECORDS} records`, 3000, () => batches(stack, admin))
  await run('VISIT', 'visit to delivery (receiver 200)', 250, () => visits(stack, admin))
  return rows
}

async function main(): Promise<void> {
  console.log(
    `bench:latency (node ${process.version}, stacks ${STACKS.join(',')}, parts ${[...PARTS].join(',')}; ` +
      `${ONE_SAMPLES} x 1 record, ${BATCH_SAMPLES} x ${BATCH_RECORDS} records, ${VISIT_SAMPLES} visits; one at a time, no other load; ` +
      `machine load average ${loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')})`,
  )
  const rows: Row[] = []
  for (const name of STACKS) {
    const stack = name === 'embedded' ? await startEmbedded() : name === 'cloud' ? await startCloud() : null
    if (!stack) throw new Error(`BENCH_STACKS: unknown stack ${name} (embedded, cloud)`)
    try {
      rows.push(...(await measure(stack)))
    } finally {
      await stack.stop()
    }
  }
  console.log(
    `(load average at the end ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')})`,
  )
  const goals = rows.filter((r) => r.stack === 'embedded')
  if (goals.length > 0) {
    console.log('Goals (embedded stack, p99):')
    for (const r of goals) {
      const p99 = quantile(r.figures.samples, 0.99)
      console.log(`  ${r.what.padEnd(34)} ${ms(p99).padStart(9)}   goal < ${ms(r.goalMs!).padEnd(8)} ${p99 < r.goalMs! ? 'met' : 'NOT MET'}`)
    }
  }
  agent.destroy()
}

await main()
