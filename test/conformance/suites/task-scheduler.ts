import { afterEach, expect, it } from 'vitest'
import type { ManualClock } from '@lsv/shared/model/clock.ts'
import type { TaskHandler, TaskMeta } from '@lsv/shared/ports/task-scheduler.ts'
import { QueueQuotaError } from '@lsv/shared/errors/queue-errors.ts'
import type { EmbeddedTaskScheduler } from '@lsv/shared/adapters/embedded/task-scheduler.ts'
import { waitFor } from './wait.ts'

/**
 * A pull-style scheduler under test, driven by a manual clock. (Cloud Tasks has no emulator: its
 * adapter is checked through the exact requests it sends, in task-scheduler.test.ts.)
 */
export interface TaskSchedulerHarness {
  scheduler: EmbeddedTaskScheduler
  clock: ManualClock
  close(): Promise<void>
}

interface Dispatch {
  payload: string
  meta: TaskMeta
}

const recorder = () => {
  const dispatches: Dispatch[] = []
  const handler: TaskHandler = async (payload, meta) => {
    dispatches.push({ payload: payload.toString(), meta })
  }
  return { dispatches, handler }
}

/** `maxQueues`: the queue quota the adapter plays (Cloud Tasks: 1,000 per region by default) */
export function taskSchedulerConformance(makeHarness: (options?: { maxQueues?: number }) => Promise<TaskSchedulerHarness>): void {
  const open: TaskSchedulerHarness[] = []
  const harness = async (options?: { maxQueues?: number }) => {
    const h = await makeHarness(options)
    open.push(h)
    return h
  }
  afterEach(async () => {
    await Promise.all(open.splice(0).map((h) => h.close()))
  })

  it('past the queue quota a new queue is refused with QueueQuotaError; existing queues keep taking tasks', async () => {
    const { scheduler } = await harness({ maxQueues: 2 })
    await scheduler.ensureQueue('q-1', { maxDispatchesPerSecond: 10, maxConcurrentDispatches: 5 })
    await scheduler.ensureQueue('q-2', { maxDispatchesPerSecond: 10, maxConcurrentDispatches: 5 })
    // mutation: no quota check in ensureQueue -> resolves, and the pool never takes over
    await expect(scheduler.ensureQueue('q-3', { maxDispatchesPerSecond: 10, maxConcurrentDispatches: 5 })).rejects.toBeInstanceOf(QueueQuotaError)
    // an existing queue is not a new one: its rate can still change
    await scheduler.ensureQueue('q-1', { maxDispatchesPerSecond: 20, maxConcurrentDispatches: 5 })
    await scheduler.enqueue({ queue: 'q-2', name: 'after-quota', payload: Buffer.from('x') })
    const { dispatches, handler } = recorder()
    expect(await scheduler.runDue(handler)).toBe(1)
    expect(dispatches.map((d) => d.meta.queue)).toEqual(['q-2'])
  })

  it('runs an enqueued task once, with its payload unchanged and dispatchCount 1', async () => {
    const { scheduler } = await harness()
    await scheduler.ensureQueue('int-a', { maxDispatchesPerSecond: 10, maxConcurrentDispatches: 5 })
    await scheduler.enqueue({ queue: 'int-a', name: 'delivery-1', payload: Buffer.from('{"delivery":"d1"}') })
    const { dispatches, handler } = recorder()
    expect(await scheduler.runDue(handler)).toBe(1)
    expect(dispatches).toEqual([{ payload: '{"delivery":"d1"}', meta: { queue: 'int-a', name: 'delivery-1', dispatchCount: 1 } }])
    expect(await scheduler.runDue(handler)).toBe(0)
  })

  it('ignores a second enqueue with the same name, also after the first one ran', async () => {
    const { scheduler, clock } = await harness()
    await scheduler.ensureQueue('int-a', { maxDispatchesPerSecond: 10, maxConcurrentDispatches: 5 })
    await scheduler.enqueue({ queue: 'int-a', name: 'same', payload: Buffer.from('first') })
    await scheduler.enqueue({ queue: 'int-a', name: 'same', payload: Buffer.from('second') })
    const { dispatches, handler } = recorder()
    await scheduler.runDue(handler)
    await scheduler.enqueue({ queue: 'int-a', name: 'same', payload: Buffer.from('third') })
    clock.advance(5000)
    await scheduler.runDue(handler)
    expect(dispatches.map((d) => d.payload)).toEqual(['first'])
  })

  it('treats equal names on different queues as different tasks', async () => {
    const { scheduler } = await harness()
    for (const q of ['int-a', 'int-b']) {
      await scheduler.ensureQueue(q, { maxDispatchesPerSecond: 10, maxConcurrentDispatches: 5 })
      await scheduler.enqueue({ queue: q, name: 'n', payload: Buffer.from(q) })
    }
    const { dispatches, handler } = recorder()
    await scheduler.runDue(handler)
    expect(dispatches.map((d) => d.payload).sort()).toEqual(['int-a', 'int-b'])
  })

  it('does not run a task before its scheduleAt', async () => {
    const { scheduler, clock } = await harness()
    await scheduler.ensureQueue('int-a', { maxDispatchesPerSecond: 10, maxConcurrentDispatches: 5 })
    await scheduler.enqueue({ queue: 'int-a', name: 'later', payload: Buffer.from('x'), scheduleAt: new Date(clock.now() + 60_000) })
    const { dispatches, handler } = recorder()
    expect(await scheduler.runDue(handler)).toBe(0)
    clock.advance(59_999)
    expect(await scheduler.runDue(handler)).toBe(0)
    clock.advance(1)
    expect(await scheduler.runDue(handler)).toBe(1)
    expect(dispatches.map((d) => d.meta.name)).toEqual(['later'])
  })

  it('dispatches no faster than maxDispatchesPerSecond per queue', async () => {
    const { scheduler, clock } = await harness()
    await scheduler.ensureQueue('slow', { maxDispatchesPerSecond: 2, maxConcurrentDispatches: 10 })
    await scheduler.ensureQueue('fast', { maxDispatchesPerSecond: 50, maxConcurrentDispatches: 10 })
    for (let i = 0; i < 7; i++) await scheduler.enqueue({ queue: 'slow', name: `s${i}`, payload: Buffer.from('s') })
    for (let i = 0; i < 7; i++) await scheduler.enqueue({ queue: 'fast', name: `f${i}`, payload: Buffer.from('f') })
    const { dispatches, handler } = recorder()
    const slowPerTick: number[] = []
    for (let tick = 0; tick < 4; tick++) {
      const before = dispatches.filter((d) => d.meta.queue === 'slow').length
      await scheduler.runDue(handler)
      await scheduler.runDue(handler) // a second look in the same instant adds nothing
      slowPerTick.push(dispatches.filter((d) => d.meta.queue === 'slow').length - before)
      clock.advance(1000)
    }
    expect(slowPerTick).toEqual([2, 2, 2, 1])
    expect(dispatches.filter((d) => d.meta.queue === 'fast')).toHaveLength(7)
    // idle time does not pile up beyond a burst of one second's worth; half a second buys one more at 2/s
    for (let i = 0; i < 3; i++) await scheduler.enqueue({ queue: 'slow', name: `extra${i}`, payload: Buffer.from('s') })
    clock.advance(10_000)
    expect(await scheduler.runDue(handler)).toBe(2)
    expect(await scheduler.runDue(handler)).toBe(0)
    clock.advance(500)
    expect(await scheduler.runDue(handler)).toBe(1)
  })

  it('runs at most maxConcurrentDispatches of a queue at once', async () => {
    const { scheduler } = await harness()
    await scheduler.ensureQueue('narrow', { maxDispatchesPerSecond: 100, maxConcurrentDispatches: 2 })
    for (let i = 0; i < 5; i++) await scheduler.enqueue({ queue: 'narrow', name: `n${i}`, payload: Buffer.from('n') })
    const releases: Array<() => void> = []
    let running = 0
    let peak = 0
    const handler: TaskHandler = async () => {
      running++
      peak = Math.max(peak, running)
      await new Promise<void>((r) => releases.push(r))
      running--
    }
    const first = scheduler.runDue(handler)
    await waitFor(() => releases.length === 2, 'two dispatches')
    expect(await scheduler.runDue(handler)).toBe(0) // both slots busy
    for (const r of releases.splice(0)) r()
    expect(await first).toBe(2)
    expect(peak).toBe(2)
  })

  it('retries a task whose handler throws, later, with dispatchCount incremented', async () => {
    const { scheduler, clock } = await harness()
    await scheduler.ensureQueue('int-a', { maxDispatchesPerSecond: 10, maxConcurrentDispatches: 5 })
    await scheduler.enqueue({ queue: 'int-a', name: 'flaky', payload: Buffer.from('p') })
    const counts: number[] = []
    const handler: TaskHandler = async (_payload, meta) => {
      counts.push(meta.dispatchCount)
      if (meta.dispatchCount < 3) throw new Error('endpoint down')
    }
    expect(await scheduler.runDue(handler)).toBe(1)
    expect(await scheduler.runDue(handler)).toBe(0) // backing off, not retried at once
    for (let i = 0; i < 6; i++) {
      clock.advance(60_000)
      await scheduler.runDue(handler)
    }
    expect(counts).toEqual([1, 2, 3])
  })

  it('start() runs due tasks by itself and close() stops it', async () => {
    const { scheduler } = await harness()
    await scheduler.ensureQueue('int-a', { maxDispatchesPerSecond: 100, maxConcurrentDispatches: 5 })
    const { dispatches, handler } = recorder()
    const running = await scheduler.start(handler)
    await scheduler.enqueue({ queue: 'int-a', name: 'auto', payload: Buffer.from('go') })
    await waitFor(() => dispatches.length === 1, 'dispatch by start()')
    await running.close()
    expect(dispatches[0]!.payload).toBe('go')
  })
}
