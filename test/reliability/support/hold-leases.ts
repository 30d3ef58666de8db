/**
 * Crash fixture for dead-owner-recovery.test.ts: opens the embedded adapters on `<dataDir>`
 * (argv[2]) and takes work it never finishes, as a process killed mid-work leaves it.
 * - `queue <n>`: subscribes to `contact-batches` (default lease) and holds up to n messages;
 * - `tasks <n>`: starts the task scheduler (10-minute dispatch lease) and holds up to n tasks.
 * Prints `took <id>` per item and waits to be SIGKILLed.
 */
import { writeSync } from 'node:fs'
import pino from 'pino'
import { openEmbeddedDb } from '../../../shared/src/adapters/embedded/db.ts'
import { createEmbeddedQueue } from '../../../shared/src/adapters/embedded/queue.ts'
import { createEmbeddedTaskScheduler } from '../../../shared/src/adapters/embedded/task-scheduler.ts'
import { systemClock } from '../../../shared/src/model/clock.ts'

const [dataDir, kind, count] = process.argv.slice(2)
if (!dataDir || (kind !== 'queue' && kind !== 'tasks')) throw new Error('usage: hold-leases.ts <dataDir> queue|tasks <n>')
const n = Number(count ?? 1)
const logger = pino({ level: 'silent' })
const edb = openEmbeddedDb(dataDir)
const forever = () => new Promise<never>(() => {})
if (kind === 'queue') {
  const queue = createEmbeddedQueue(edb, { clock: systemClock, logger, pollIntervalMs: 20 })
  await queue.subscribe(
    'contact-batches',
    async (m) => {
      writeSync(1, `took ${m.id}\n`)
      return forever()
    },
    { maxInFlight: n },
  )
} else {
  const scheduler = createEmbeddedTaskScheduler(edb, { clock: systemClock, logger, pollIntervalMs: 20 })
  await scheduler.start(async (_payload, task) => {
    writeSync(1, `took ${task.name}\n`)
    return forever()
  })
}
writeSync(1, 'ready\n')
setInterval(() => {}, 60_000) // stay alive until killed
