/**
 * `npm start`'s task scheduler (adapters/embedded/task-scheduler.ts) runs each task in the trace
 * of whoever enqueued it, as Cloud Tasks does with the task's `traceparent` header (issue 31: a
 * test event's delivery ran inside another visit's trace, so its `traceparent` and its delivery
 * record disagreed). The scheduler's wake-up timer is armed by the first enqueue of a turn: the
 * second enqueue, from another trace, must not run in the first one's.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { trace } from '@opentelemetry/api'
import pino from 'pino'
import { startTelemetry, stopTelemetry } from '@lsv/shared/platform/telemetry.ts'
import { activeTraceId } from '@lsv/shared/logging/trace-propagation.ts'
import { openEmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createEmbeddedTaskScheduler } from '@lsv/shared/adapters/embedded/task-scheduler.ts'
import { systemClock } from '@lsv/shared/model/clock.ts'

const dataDir = mkdtempSync(join(tmpdir(), 'lsv-task-trace-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe('embedded tasks and traces', () => {
  it('each task runs in its enqueuer’s trace, not in the trace of the enqueue that woke the scheduler', async () => {
    await startTelemetry('task-trace-test', { TRACE_EXPORTER: 'file', DATA_DIR: dataDir })
    const db = openEmbeddedDb(dataDir)
    const tasks = createEmbeddedTaskScheduler(db, { clock: systemClock, logger: pino({ level: 'silent' }), pollIntervalMs: 60_000 })
    await tasks.ensureQueue('q', { maxDispatchesPerSecond: 100, maxConcurrentDispatches: 10 })
    const ran = new Map<string, string | null>()
    let done: () => void = () => {}
    const bothRan = new Promise<void>((resolve) => (done = resolve))
    const started = await tasks.start(async (_payload, meta) => {
      ran.set(meta.name, activeTraceId())
      if (ran.size === 2) done()
    })
    const tracer = trace.getTracer('test')
    const enqueueIn = (spanName: string, task: string) =>
      tracer.startActiveSpan(spanName, (span) => {
        // the insert and the wake-up are synchronous: both enqueues fall in one turn of the loop
        void tasks.enqueue({ queue: 'q', name: task, payload: Buffer.from('{}') })
        span.end()
        return span.spanContext().traceId
      })
    const visitTrace = enqueueIn('visit', 'visit-delivery')
    const testEventTrace = enqueueIn('test event', 'test-event-delivery')
    await bothRan
    await started.close()
    await tasks.close()
    await db.close()
    await stopTelemetry()
    expect(ran.get('visit-delivery')).toBe(visitTrace)
    // mutation: the tick's timer armed in the visit's context runs this task in the visit's trace
    expect(ran.get('test-event-delivery')).toBe(testEventTrace)
  })
})
