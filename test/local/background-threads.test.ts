/**
 * `npm start` runs the upsert worker's consumer (and the dispatcher's) on worker threads of its
 * one process, so a batch's CPU never holds the event loop that answers `/healthz` (issue 16, item
 * 9; shared/src/platform/background.ts, background-thread.ts). Driven as a user runs it
 * (scripts/start-local.ts in a child process, pushes over HTTP), with a preload that only watches
 * which thread writes contacts (fixtures/thread-probe.ts; Node runs it on every thread):
 *
 * - the contacts of a pushed batch are written by the upsert worker's thread, never by the main
 *   thread (threadId 0): this fails if the consumer runs on the main thread again;
 * - SIGTERM while that thread is mid-batch drains it: the process exits 0 within Cloud Run's
 *   10 s, the batch is applied whole and acknowledged (nothing left on the queue), so the thread's
 *   consumer finished and settled before the process ended;
 * - a thread that crashes does not go unnoticed: the stack logs it and exits 1, and the batch it
 *   held is applied by the next start on the same folder (its lease runs out);
 * - `/readyz` of the upsert worker covers its thread's consumer: one that cannot claim makes it
 *   503 `queue`, as when the consumer ran on the main thread's queue adapter; the edge, which can
 *   still queue batches, stays ready.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { existsSync, readFileSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { freeLocalStackPorts } from '../../scripts/lib/local-stack.ts'
import { readDemoCredentials, type DemoCredentials } from '../../scripts/lib/demo-tenant.ts'
import { tempDataDir } from '../helpers/embedded.ts'
import { spawnLocalStack, type LocalStackPorts, type LocalStackProcess } from './local-stack.ts'

const PROBE = join(import.meta.dirname, 'fixtures', 'thread-probe.ts')
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

type Stack = LocalStackProcess
type Ports = LocalStackPorts

const dataDirs: Array<{ cleanup(): void }> = []
afterAll(() => {
  for (const d of dataDirs) d.cleanup()
})

/** the stack with the thread probe preloaded on every thread */
function startStack(dir: string, ports: Ports, env: Record<string, string> = {}): Stack {
  return spawnLocalStack(dir, ports, { NODE_OPTIONS: `--import ${PROBE}`, THREAD_PROBE_FILE: join(dir, 'thread-probe.jsonl'), ...env })
}

async function waitBanner(stack: Stack): Promise<void> {
  for (let i = 0; i < 600 && stack.child.exitCode === null; i++) {
    if (stack.output().includes('Stop with Ctrl-C.')) return
    await sleep(100)
  }
  throw new Error(`npm start did not come up:\n${stack.output()}`)
}

async function exitCode(stack: Stack, withinMs: number): Promise<number | null | 'timeout'> {
  const code = await Promise.race([stack.exited, sleep(withinMs).then(() => 'timeout' as const)])
  if (code === 'timeout' && stack.child.pid) process.kill(stack.child.pid, 'SIGKILL')
  return code
}

function push(port: number, creds: DemoCredentials, records: number, tag: string): Promise<number | null> {
  const body = JSON.stringify({
    contacts: Array.from({ length: records }, (_, i) => ({ external_id: `${tag}-${i}`, email: `${tag}.${i}@example.com`, first_name: `F${i}` })),
  })
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/contacts',
        method: 'POST',
        headers: {
          host: `${creds.public_id}.edge.localhost:${port}`,
          authorization: `Bearer ${creds.api_key}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? null))
      },
    )
    req.on('error', () => resolve(null))
    req.end(body)
  })
}

/** What the data folder holds, from a read-only connection of the test's own. */
function stored(dir: string, accountId: string): { contacts: number; batchesQueued: number } {
  const db = new DatabaseSync(join(dir, 'platform.db'), { readOnly: true })
  try {
    db.exec('PRAGMA busy_timeout = 5000')
    const contacts = (db.prepare('SELECT count(*) AS n FROM contacts WHERE account_id = ?').get(accountId) as { n: number }).n
    const batchesQueued = (db.prepare("SELECT count(*) AS n FROM queue_messages WHERE topic = 'contact-batches'").get() as { n: number }).n
    return { contacts, batchesQueued }
  } finally {
    db.close()
  }
}

/** The threads that wrote contacts (fixtures/thread-probe.ts). */
function contactWriters(dir: string): Array<{ threadId: number; service: string | null }> {
  const file = join(dir, 'thread-probe.jsonl')
  if (!existsSync(file)) return []
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { threadId: number; service: string | null })
}

describe('npm start: background consumers on worker threads', () => {
  it("a batch is upserted by the upsert worker's thread, not the main thread; SIGTERM mid-batch drains the thread and exits 0", async () => {
    const data = tempDataDir('lsv-local-threads-')
    dataDirs.push(data)
    const ports = await freeLocalStackPorts()
    const stack = startStack(data.dir, ports)
    await waitBanner(stack)
    const creds = readDemoCredentials(data.dir)!
    const RECORDS = 10_000
    expect(await push(ports.edge, creds, RECORDS, 'drain')).toBe(202)
    // the first contact written: the thread is on the batch
    for (let i = 0; i < 300 && contactWriters(data.dir).length === 0; i++) await sleep(20)
    const atSignal = stored(data.dir, creds.account_id)
    stack.child.kill('SIGTERM')
    expect(await exitCode(stack, 10_000), stack.output()).toBe(0)

    const writers = contactWriters(data.dir)
    expect(writers.length, 'no contact written').toBeGreaterThan(0)
    expect(
      writers.every((w) => w.threadId !== 0 && w.service === 'upsert-worker'),
      JSON.stringify(writers),
    ).toBe(true)
    // the signal landed mid-batch (else this would not test the drain) and the batch finished anyway
    expect(atSignal.contacts, 'the batch was already applied when SIGTERM was sent').toBeLessThan(RECORDS)
    expect(stored(data.dir, creds.account_id)).toEqual({ contacts: RECORDS, batchesQueued: 0 })
  }, 90_000)

  it("a crash of the upsert worker's thread stops the stack with exit 1; the next start applies the batch it held", async () => {
    const data = tempDataDir('lsv-local-crash-')
    dataDirs.push(data)
    const ports = await freeLocalStackPorts()
    const crashing = startStack(data.dir, ports, { THREAD_PROBE_CRASH: 'upsert-worker' })
    await waitBanner(crashing)
    const creds = readDemoCredentials(data.dir)!
    expect(await push(ports.edge, creds, 1000, 'crash')).toBe(202)
    expect(await exitCode(crashing, 20_000), crashing.output()).toBe(1)
    expect(crashing.output()).toContain('upsert-worker background thread stopped')
    expect(crashing.output()).toContain('thread-probe: upsert-worker background thread crashes')
    expect(stored(data.dir, creds.account_id).batchesQueued).toBe(1)

    const next = startStack(data.dir, ports)
    await waitBanner(next)
    // the dead thread's lease (10 s) runs out, then the batch is delivered again
    let now = stored(data.dir, creds.account_id)
    for (let i = 0; i < 300 && (now.contacts < 1000 || now.batchesQueued > 0); i++) {
      await sleep(200)
      now = stored(data.dir, creds.account_id)
    }
    expect(now).toEqual({ contacts: 1000, batchesQueued: 0 })
    next.child.kill('SIGTERM')
    expect(await exitCode(next, 10_000), next.output()).toBe(0)
  }, 120_000)

  it('/readyz says "queue" while a consumer thread cannot claim messages; /healthz stays 200', async () => {
    const data = tempDataDir('lsv-local-claims-')
    dataDirs.push(data)
    const ports = await freeLocalStackPorts()
    const stack = startStack(data.dir, ports, { THREAD_PROBE_FAIL_CLAIMS: 'upsert-worker' })
    await waitBanner(stack)
    const get = async (port: number, path: string) => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`)
      return { status: res.status, body: (await res.json()) as unknown }
    }
    // readiness is checked every 10 s from kept state: the thread reports its queue's health as it changes
    let ready = await get(ports.worker, '/readyz')
    for (let i = 0; i < 150 && ready.status === 200; i++) {
      await sleep(100)
      ready = await get(ports.worker, '/readyz')
    }
    expect(ready).toEqual({ status: 503, body: { ok: false, reasons: ['queue'] } })
    expect(await get(ports.edge, '/readyz')).toEqual({ status: 200, body: { ok: true } })
    expect((await get(ports.worker, '/healthz')).status).toBe(200)
    stack.child.kill('SIGTERM')
    expect(await exitCode(stack, 10_000), stack.output()).toBe(0)
  }, 60_000)
})
