/**
 * Micro-benchmarks of the small push's local cuts (docs/performance.md, "Fourth pass"), each
 * against a control in this same process: the code as it was before the cut, kept here as the
 * control. Alternating rounds (control, cut, cut, control, …); per figure the median of the
 * rounds' CPU µs per operation. `node bench/push-cuts.ts` (BENCH_ROUNDS, default 7).
 *
 *  1. the key's HMAC: createHmac per call (control) vs hashSecret (two one-shot hashes on the
 *     pepper's pads);
 *  2. the push log entry id: randomBytes(4) per id (control) vs pushLogEntryId (a per-process tag);
 *  3. the queue's commit of 12 published messages with the rate-limit writes of 12 pushes (what
 *     one group commit holds at 100 connections), on the queue's own tables: random UUID ids and
 *     `INSERT … SELECT … WHERE EXISTS` (control) vs UUIDv7 ids and a subscription read then a
 *     plain insert (the publisher's statements now), per push;
 *  4. the wake-up of the queue's other threads: a message per publish (control) vs the publishes
 *     of one group commit told in one message (queue-wakeups.ts), 12 publishes per turn, per publish;
 *  5. the rate limiter's claim of a push's two windows (docs/performance.md, "Fifth pass"), in a
 *     commit of 12 pushes, each in a fresh minute (as part A's clock): a read and an upsert per
 *     window (control, the statements before) vs one conditional upsert per window (the limiter's
 *     statement now), per push;
 *  6. parseJsonBody of the 10,000-record 8 MiB batch of bench:ingest part B: one with a `\u`
 *     escape in a value, which the byte search cannot clear, so its parse is walked for prototype
 *     keys (control: what every body paid before) vs the same batch without it (the search
 *     clears it, no walk), per batch.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto'
import { BroadcastChannel } from 'node:worker_threads'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { hashSecret, generateApiKey } from '../shared/src/domain/auth/hashing.ts'
import { pushLogEntryId } from '../shared/src/domain/activity/push-log.ts'
import { openEmbeddedDb } from '../shared/src/adapters/embedded/db.ts'
import { createEmbeddedQueue } from '../shared/src/adapters/embedded/queue.ts'
import { wake } from '../shared/src/adapters/embedded/queue-wakeups.ts'
import { createEmbeddedRateLimiter } from '../shared/src/adapters/embedded/rate-limiter.ts'
import { systemClock } from '../shared/src/model/clock.ts'
import { parseJsonBody } from '../shared/src/lib/json.ts'
import { bigBatchRecords } from './lib/big-batch.ts'
import { median } from './lib/rounds.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)
const cpuUs = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}

/** CPU µs per operation of `run(n)` doing n operations */
function perOp(n: number, run: (n: number) => void): number {
  const start = cpuUs()
  run(n)
  return (cpuUs() - start) / n
}

/** `unit`: µs per printed unit (1000 prints ms) */
function compare(label: string, n: number, control: (n: number) => void, cut: (n: number) => void, unit = 1): void {
  control(Math.ceil(n / 10))
  cut(Math.ceil(n / 10))
  const c: number[] = []
  const x: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2 === 0) {
      c.push(perOp(n, control))
      x.push(perOp(n, cut))
    } else {
      x.push(perOp(n, cut))
      c.push(perOp(n, control))
    }
  }
  console.log(
    `${label.padEnd(44)} control ${(median(c) / unit).toFixed(2).padStart(7)} ${unit === 1 ? 'µs' : 'ms'}   cut ${(median(x) / unit).toFixed(2).padStart(7)} ${unit === 1 ? 'µs' : 'ms'}   cut/control ${(median(x) / median(c)).toFixed(2)}`,
  )
}

console.log(
  `bench:push-cuts (rounds ${ROUNDS}, node ${process.version}, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')})`,
)

// 1. HMAC of the presented key
const pepper = randomBytes(32).toString('base64url')
const keys = Array.from({ length: 1000 }, () => generateApiKey())
let sink = 0
compare(
  '1. HMAC-SHA256 of an API key',
  100_000,
  (n) => {
    for (let i = 0; i < n; i++)
      sink += createHmac('sha256', pepper)
        .update(keys[i % 1000]!, 'utf8')
        .digest('hex').length
  },
  (n) => {
    for (let i = 0; i < n; i++) sink += hashSecret(pepper, keys[i % 1000]!).length
  },
)

// 2. push log entry ids (the control is the previous pushLogEntryId)
let lastMs = -1
let sequence = 0
const previousEntryId = (nowMs: number) => {
  if (nowMs === lastMs) sequence = (sequence + 1) & 0xffff
  else {
    lastMs = nowMs
    sequence = 0
  }
  return `${String(nowMs).padStart(13, '0')}-${sequence.toString(16).padStart(4, '0')}${randomBytes(4).toString('hex')}`
}
compare(
  '2. push log entry id',
  200_000,
  (n) => {
    for (let i = 0; i < n; i++) sink += previousEntryId(Date.now()).length
  },
  (n) => {
    for (let i = 0; i < n; i++) sink += pushLogEntryId(Date.now()).length
  },
)

// 3. one group commit: 12 publishes and 12 pushes' rate-limit writes, on the real tables
const dir = mkdtempSync(join(tmpdir(), 'lsv-bench-cuts-'))
const edb = openEmbeddedDb(dir)
const queue = createEmbeddedQueue(edb, { clock: systemClock, logger: pino({ level: 'silent' }) })
createEmbeddedRateLimiter(edb) // its tables
const { db } = edb
const before = db.prepare(`INSERT INTO queue_messages (id, topic, data, attributes, published_at, visible_at, expire_at)
    SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM queue_subscriptions WHERE topic = ?)`)
const subscribed = db.prepare('SELECT 1 FROM queue_subscriptions WHERE topic = ?')
const plain = db.prepare('INSERT INTO queue_messages (id, topic, data, attributes, published_at, visible_at, expire_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
const readCount = db.prepare('SELECT count FROM rate_counters WHERE slot = ?')
const count = db.prepare('INSERT INTO rate_counters (slot, count, expire_at_ms) VALUES (?, 1, ?) ON CONFLICT (slot) DO UPDATE SET count = count + 1')
const v7 = (nowMs: number) => {
  const time = nowMs.toString(16).padStart(12, '0')
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randomUUID().slice(15)}`
}
const data = Buffer.from(JSON.stringify({ contacts: [{ external_id: 'one', email: 'one@example.com', first_name: 'One' }] }))
const attributes = JSON.stringify({
  v: '1',
  shape: 'contacts',
  account_id: randomUUID(),
  connection_id: 'con_0123456789ab',
  source: 'crm',
  batch_id: randomUUID(),
})
const keyHash = 'a'.repeat(64)
let windowMs = Date.now()
/** a push's rate-limit writes: a fresh 60 s window each time (as part A's clock does), the day's window */
const rateLimitWrites = () => {
  windowMs += 61_000
  for (const [name, seconds] of [
    ['push-60s', 60],
    ['push-24h', 86_400],
  ] as const) {
    const slot = `${keyHash}_${name}_${Math.floor(windowMs / 1000 / seconds) * seconds}`
    readCount.get(slot)
    count.run(slot, windowMs + seconds * 1000)
  }
}
const commits = (insert: (now: number) => void) => (pushes: number) => {
  for (let done = 0; done < pushes; done += 12) {
    edb.transaction(() => {
      for (let i = 0; i < 12; i++) {
        const now = Date.now()
        rateLimitWrites()
        insert(now)
      }
    })
  }
}
// a backlog as under load (part A never consumes): 20,000 messages
commits((now) => plain.run(v7(now), 'contact-batches', data, attributes, new Date(now).toISOString(), now, now + 6e8))(20_004)
compare(
  '3. group commit of 12 pushes, per push',
  6_000,
  commits((now) => before.run(randomUUID(), 'contact-batches', data, attributes, new Date(now).toISOString(), now, now + 6e8, 'contact-batches')),
  commits((now) => {
    if (subscribed.get('contact-batches') !== undefined) plain.run(v7(now), 'contact-batches', data, attributes, new Date(now).toISOString(), now, now + 6e8)
  }),
)

// 4. wake-ups of the other threads: 12 publishes per turn of the event loop
const channel = new BroadcastChannel('lsv-embedded-queue-wakeups')
channel.unref()
const key = `${edb.path}\u0000contact-batches`
const turns = async (publishes: number, each: () => void) => {
  for (let done = 0; done < publishes; done += 12) {
    for (let i = 0; i < 12; i++) each()
    await new Promise((resolve) => setImmediate(resolve))
  }
}
const asyncPerOp = async (n: number, run: (n: number) => Promise<void>) => {
  const start = cpuUs()
  await run(n)
  return (cpuUs() - start) / n
}
const wakeControl = (n: number) => turns(n, () => channel.postMessage(key))
const wakeCut = (n: number) => turns(n, () => wake(edb.path, 'contact-batches'))
const wc: number[] = []
const wx: number[] = []
for (let r = 0; r < ROUNDS; r++) {
  wc.push(await asyncPerOp(24_000, wakeControl))
  wx.push(await asyncPerOp(24_000, wakeCut))
}
console.log(
  `${'4. other threads woken, per publish'.padEnd(44)} control ${median(wc).toFixed(2).padStart(7)} µs   cut ${median(wx).toFixed(2).padStart(7)} µs   cut/control ${(median(wx) / median(wc)).toFixed(2)}`,
)
channel.close()

// 5. the rate limiter's claims: a read and an upsert per window (control) vs one conditional upsert
const claim = db.prepare(
  'INSERT INTO rate_counters (slot, count, expire_at_ms) VALUES (?, 1, ?) ON CONFLICT (slot) DO UPDATE SET count = count + 1 WHERE count < ?',
)
const windows = [
  { name: 'push-60s', limit: 120, seconds: 60 },
  { name: 'push-24h', limit: 50_000, seconds: 86_400 },
]
const claims = (claimWindows: (slots: Array<{ id: string; endMs: number; limit: number }>) => void) => (pushes: number) => {
  for (let done = 0; done < pushes; done += 12) {
    edb.transaction(() => {
      for (let i = 0; i < 12; i++) {
        windowMs += 61_000
        claimWindows(
          windows.map((w) => {
            const start = Math.floor(windowMs / 1000 / w.seconds) * w.seconds
            return { id: `${keyHash}_${w.name}_${start}`, endMs: (start + w.seconds) * 1000, limit: w.limit }
          }),
        )
      }
    })
  }
}
compare(
  '5. rate-limit claims of a push (2 windows)',
  12_000,
  claims((slots) => {
    const current = slots.map((s) => Number((readCount.get(s.id) as { count: number } | undefined)?.count ?? 0))
    if (current.some((c, i) => c >= slots[i]!.limit)) return
    for (const s of slots) count.run(s.id, s.endMs)
  }),
  claims((slots) => {
    for (const s of slots) if (claim.run(s.id, s.endMs, s.limit).changes === 0) return
  }),
)

// 6. the prototype-key check of an 8 MiB batch: walked (a body the byte search cannot clear) vs cleared by the search
const batch = JSON.stringify({ contacts: bigBatchRecords() })
const cleared = Buffer.from(batch)
const walked = Buffer.from(batch.replace('Head of Things', 'Head of \\u0054hings'))
compare(
  '6. parseJsonBody of the 8 MiB batch',
  12,
  (n) => {
    for (let i = 0; i < n; i++) sink += (parseJsonBody(walked) as { contacts: unknown[] }).contacts.length
  },
  (n) => {
    for (let i = 0; i < n; i++) sink += (parseJsonBody(cleared) as { contacts: unknown[] }).contacts.length
  },
  1000,
)

await queue.close()
await edb.close()
rmSync(dir, { recursive: true, force: true })
if (sink < 0) console.log(sink)
