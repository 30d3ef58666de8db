import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pino from 'pino'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { DeliveryRecord } from '@lsv/shared/model/records.ts'
import type { TaskRequest, TaskScheduler } from '@lsv/shared/ports/task-scheduler.ts'
import type { EmbeddedTaskScheduler } from '@lsv/shared/adapters/embedded/task-scheduler.ts'
import { createDeliveryTaskHandler } from '@lsv/shared/domain/webhooks/deliver.ts'
import { enqueueAttempt, readDeliveryTask } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { buildApp as buildDispatcher } from '../../services/webhook-dispatcher/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'

/**
 * A Cloud Tasks delivery task carries a DeliveryJob (contract/messages.ts, version 1). One that
 * is not (another version, another shape, not JSON) is refused on consume: logged with the
 * reason and finished, never run and never retried (running the same bytes again cannot help).
 */

const job = { v: 1, delivery_id: 'dlv_unknown', seq: 1, attempt: 1 }
const BAD: Record<string, string> = {
  'another version': JSON.stringify({ ...job, v: 2 }),
  'no version': JSON.stringify({ delivery_id: job.delivery_id, seq: 1, attempt: 1 }),
  'the version as a string': JSON.stringify({ ...job, v: '1' }),
  'an empty delivery id': JSON.stringify({ ...job, delivery_id: '' }),
  'a delivery id that is not a string': JSON.stringify({ ...job, delivery_id: 7 }),
  'seq 0': JSON.stringify({ ...job, seq: 0 }),
  'a fractional attempt': JSON.stringify({ ...job, attempt: 1.5 }),
  'no attempt': JSON.stringify({ v: 1, delivery_id: job.delivery_id, seq: 1 }),
  'an array': '[]',
  null: 'null',
  'not JSON': '{"v":1,',
}

interface LogLine {
  level: number
  msg: string
  reason?: string
}

function capturingLogger() {
  const lines: LogLine[] = []
  const logger = pino(
    { level: 'info' },
    {
      write: (s: string) => {
        lines.push(JSON.parse(s) as LogLine)
      },
    },
  )
  return { logger, lines }
}

describe('delivery task payloads on consume', () => {
  const clock = new ManualClock()
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let app: App
  let base: string
  const log = capturingLogger()

  beforeAll(async () => {
    deps = await createTestDeps({ clock })
    app = await buildDispatcher({ ...deps, logger: log.logger })
    await app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  })
  afterAll(async () => {
    await app?.close()
    await deps?.cleanup()
  })

  it('reads what enqueueAttempt writes', async () => {
    const enqueued: TaskRequest[] = []
    const tasks: TaskScheduler = {
      ensureQueue: async () => {},
      enqueue: async (t) => {
        enqueued.push(t)
      },
      start: async () => ({ close: async () => {} }),
      close: async () => {},
    }
    await enqueueAttempt({ ...deps, tasks }, { id: 'dlv_abc', integration_id: 'int_1' } as DeliveryRecord, { seq: 3, attempt: 2 })
    expect(readDeliveryTask(enqueued[0]!.payload)).toEqual({ ok: true, value: { v: 1, delivery_id: 'dlv_abc', seq: 3, attempt: 2 } })
  })

  it('POST /tasks/deliver answers 200 `invalid` to each (a 2xx ends the task in Cloud Tasks) and logs why', async () => {
    for (const [label, body] of Object.entries(BAD)) {
      const before = log.lines.length
      const res = await fetch(`${base}/tasks/deliver`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body })
      const answer = { label, status: res.status, body: await res.json() }
      expect(answer).toEqual({ label, status: 200, body: { ok: true, outcome: 'invalid' } })
      const dropped = log.lines.slice(before).filter((l) => l.msg === 'dropping an unreadable delivery task')
      expect(dropped, label).toHaveLength(1)
      expect(dropped[0]!.level, label).toBe(50)
      expect(dropped[0]!.reason, label).toMatch(/\S/)
    }
    // a well-formed job of an unknown delivery is read, and found stale
    const res = await fetch(`${base}/tasks/deliver`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(job) })
    expect(await res.json()).toEqual({ ok: true, outcome: 'stale' })
  })

  it('the embedded scheduler runs such a task once and never again', async () => {
    const scheduler = deps.tasks as EmbeddedTaskScheduler
    const handler = createDeliveryTaskHandler({ ...deps, logger: log.logger })
    const outcomes: string[] = []
    const run = async (payload: Buffer) => {
      outcomes.push(await handler(payload))
    }
    await scheduler.ensureQueue('poison-test', { maxDispatchesPerSecond: 100, maxConcurrentDispatches: 50 })
    const names = Object.keys(BAD).map((_, i) => `poison-${i}`)
    for (const [i, body] of Object.values(BAD).entries()) await scheduler.enqueue({ queue: 'poison-test', name: names[i]!, payload: Buffer.from(body) })
    let ran = 0
    for (let pass = 0; pass < 5; pass++) ran += await scheduler.runDue(run)
    expect(ran).toBe(names.length)
    expect(outcomes).toEqual(names.map(() => 'invalid'))
    // past every retry backoff and lease: nothing comes back
    clock.advance(24 * 60 * 60_000 - 60_000)
    expect(await scheduler.runDue(run)).toBe(0)
  })
})
