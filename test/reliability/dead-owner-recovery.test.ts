/**
 * Recovery in seconds (issue 23): work leased by a process that no longer exists is retried at
 * once, not when its lease runs out (10 s for a queue message, 10 min for a delivery task on `npm
 * start`). A child process takes work on the embedded adapters and is SIGKILLed holding it; a
 * "restart" (adapters opened afresh on the same folder) must get every interrupted item back
 * while the dead process's leases would still have kept it. A process that is alive keeps its
 * leases. Figures: time from the restart (opening the adapters) to the last interrupted item.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { fileURLToPath } from 'node:url'
import { afterEach, expect, it } from 'vitest'
import pino from 'pino'
import { systemClock } from '@lsv/shared/model/clock.ts'
import { openEmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createEmbeddedQueue } from '@lsv/shared/adapters/embedded/queue.ts'
import { createEmbeddedTaskScheduler } from '@lsv/shared/adapters/embedded/task-scheduler.ts'
import { tempDataDir } from '../helpers/embedded.ts'
import { sleep, waitFor } from '../conformance/suites/wait.ts'
import { printFigure } from './support/figures.ts'

const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' })
const fixture = fileURLToPath(new URL('./support/hold-leases.ts', import.meta.url))
const node = fileURLToPath(new URL('../../node_modules/.bin/node', import.meta.url))
const ITEMS = 5
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

function holder(dir: string, kind: 'queue' | 'tasks'): { child: ChildProcess; took(): number; kill(): Promise<void> } {
  const child = spawn(node, [fixture, dir, kind, String(ITEMS)], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()))
  const exited = new Promise((r) => child.once('exit', r))
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL')
    await exited
  }
  cleanups.push(kill)
  return { child, took: () => out.split('\n').filter((l) => l.startsWith('took ')).length, kill }
}

/** the earliest moment a lease the dead process left would have let its work go (ms since epoch) */
function earliestLeaseEnd(dir: string, sql: string): number {
  const db = new DatabaseSync(join(dir, 'platform.db'), { readOnly: true })
  try {
    return (db.prepare(sql).get() as { at: number }).at
  } finally {
    db.close()
  }
}

async function queueWithMessages(dir: string) {
  const edb = openEmbeddedDb(dir)
  const queue = createEmbeddedQueue(edb, { clock: systemClock, logger, pollIntervalMs: 20 })
  for (let i = 0; i < ITEMS; i++) await queue.publish('contact-batches', Buffer.from(`batch ${i}`))
  await queue.close()
  await edb.close()
}

async function schedulerWithTasks(dir: string) {
  const edb = openEmbeddedDb(dir)
  const scheduler = createEmbeddedTaskScheduler(edb, { clock: systemClock, logger })
  await scheduler.ensureQueue('deliveries-x', { maxDispatchesPerSecond: 100, maxConcurrentDispatches: ITEMS })
  for (let i = 0; i < ITEMS; i++) await scheduler.enqueue({ queue: 'deliveries-x', name: `visit-${i}`, payload: Buffer.from(`delivery ${i}`) })
  await scheduler.close()
  await edb.close()
}

/** "restarts": opens the adapter on the folder and resolves with ms until every item came back, and their attempts */
async function restartAndCollect(dir: string, kind: 'queue' | 'tasks'): Promise<{ ms: number; at: number; attempts: number[] }> {
  const started = performance.now()
  const edb = openEmbeddedDb(dir)
  const attempts: number[] = []
  if (kind === 'queue') {
    const queue = createEmbeddedQueue(edb, { clock: systemClock, logger, pollIntervalMs: 20 })
    const sub = await queue.subscribe(
      'contact-batches',
      async (m) => {
        attempts.push(m.deliveryAttempt)
        return 'ack'
      },
      { maxInFlight: ITEMS },
    )
    cleanups.push(async () => {
      await sub.close()
      await queue.close()
      await edb.close()
    })
  } else {
    const scheduler = createEmbeddedTaskScheduler(edb, { clock: systemClock, logger, pollIntervalMs: 20 })
    const run = await scheduler.start(async (_p, task) => {
      attempts.push(task.dispatchCount)
    })
    cleanups.push(async () => {
      await run.close()
      await scheduler.close()
      await edb.close()
    })
  }
  // mutation: without the release of dead owners' leases (queue.ts / task-scheduler.ts reapDeadOwners)
  // nothing comes back before the lease runs out: 10 s for messages (the assertion below), 10 min for tasks (this wait)
  await waitFor(() => attempts.length >= ITEMS, `${ITEMS} interrupted ${kind} items back after the restart`, 60_000)
  return { ms: performance.now() - started, at: Date.now(), attempts }
}

const LEASE_END = {
  queue: "SELECT min(visible_at) AS at FROM queue_messages WHERE topic = 'contact-batches'",
  tasks: 'SELECT min(lease_until) AS at FROM task_tasks WHERE done_at IS NULL',
}

for (const kind of ['tasks', 'queue'] as const) {
  it(`${kind}: after a SIGKILL, a restart gets every interrupted item back at once, not when the dead process's leases run out`, async () => {
    const { dir, cleanup } = tempDataDir()
    cleanups.push(cleanup)
    if (kind === 'queue') await queueWithMessages(dir)
    else await schedulerWithTasks(dir)
    const child = holder(dir, kind)
    await waitFor(() => child.took() === ITEMS, `the child to take ${ITEMS} ${kind} items`, 60_000)
    await child.kill()
    const leaseEnd = earliestLeaseEnd(dir, LEASE_END[kind])

    const back = await restartAndCollect(dir, kind)
    expect(back.attempts).toEqual(Array(ITEMS).fill(2))
    expect(back.at).toBeLessThan(leaseEnd)
    printFigure(
      `Recovery after a crash (${kind === 'tasks' ? 'deliveries' : 'batches'})`,
      `${ITEMS}/${ITEMS} interrupted ${kind === 'tasks' ? 'delivery tasks' : 'queue messages'} back ${(back.ms / 1000).toFixed(2)} s after the restart (the dead process's leases had ${((leaseEnd - back.at) / 1000).toFixed(1)} s left)`,
    )
  }, 120_000)
}

it('a process that is alive keeps its leases; once it is SIGKILLed a consumer already running gets its work within seconds', async () => {
  const { dir, cleanup } = tempDataDir()
  cleanups.push(cleanup)
  await queueWithMessages(dir)
  await schedulerWithTasks(dir)
  const queueHolder = holder(dir, 'queue')
  const taskHolder = holder(dir, 'tasks')
  await waitFor(() => queueHolder.took() === ITEMS && taskHolder.took() === ITEMS, 'the children to take their items', 60_000)

  // a second process on the folder (this one), claiming all along
  const edb = openEmbeddedDb(dir)
  const queue = createEmbeddedQueue(edb, { clock: systemClock, logger, pollIntervalMs: 20 })
  const scheduler = createEmbeddedTaskScheduler(edb, { clock: systemClock, logger, pollIntervalMs: 20 })
  let messages = 0
  let tasks = 0
  const sub = await queue.subscribe('contact-batches', async () => {
    messages++
    return 'ack'
  })
  const run = await scheduler.start(async () => {
    tasks++
  })
  cleanups.push(async () => {
    await sub.close()
    await run.close()
    await queue.close()
    await scheduler.close()
    await edb.close()
  })
  // mutation: lease-owners.ts isDead() answering true for a live process hands its work over here
  await sleep(2500) // more than two reap intervals (1 s), less than the 10 s queue lease
  expect({ messages, tasks }).toEqual({ messages: 0, tasks: 0 })

  await Promise.all([queueHolder.kill(), taskHolder.kill()])
  const killed = performance.now()
  const leaseEnd = earliestLeaseEnd(dir, LEASE_END.queue)
  // mutation: without the reap on claims (only when an adapter opens) this waits for the leases
  await waitFor(() => messages === ITEMS && tasks === ITEMS, 'the dead children’s work', 60_000)
  expect(Date.now()).toBeLessThan(leaseEnd)
  printFigure(
    'Recovery with a live second process',
    `${ITEMS} messages and ${ITEMS} tasks taken over ${((performance.now() - killed) / 1000).toFixed(2)} s after the SIGKILL of their holders; 0 taken while they were alive (2.5 s)`,
  )
}, 120_000)
