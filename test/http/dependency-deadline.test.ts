/**
 * The edge's dependency deadline (shared/src/http/dependency-deadline.ts) on fake timers: a
 * dependency that never answers becomes a 503 `temporarily unavailable` with Retry-After exactly
 * when the stage's deadline passes, and not before; an answer or a failure within it passes
 * through unchanged; the calls of one stage share one deadline. The stall test on a paused
 * Firestore emulator is test/reliability/dependency-stall.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { StageDeadline, withinDeadline } from '@lsv/shared/http/dependency-deadline.ts'
import { AppError } from '@lsv/shared/errors/app-error.ts'

const never = () => new Promise<never>(() => {})
const MS = 5_000

describe('dependency deadlines', () => {
  beforeEach(() => vi.useFakeTimers())
  afterEach(() => vi.useRealTimers())

  // Mutation: no timer in the race (return await work) -> the call is still pending after the deadline
  // Mutation: the timer rejects with a plain Error -> the code is not temporarily_unavailable (a 500, not a 503)
  it('a never-answering dependency is a 503 temporarily_unavailable with Retry-After once the deadline passes, not before', async () => {
    let outcome: unknown = 'pending'
    void withinDeadline(MS, never)().then(
      (v) => (outcome = v),
      (e: unknown) => (outcome = e),
    )
    await vi.advanceTimersByTimeAsync(MS - 1)
    expect(outcome).toBe('pending')
    await vi.advanceTimersByTimeAsync(1)
    expect(outcome).toBeInstanceOf(AppError)
    expect(outcome).toMatchObject({ code: 'temporarily_unavailable', status: 503, message: 'temporarily unavailable', headers: { 'retry-after': '5' } })
  })

  // Mutation: each `within` starts its own full deadline -> the second call is still pending at the stage's end
  it('the calls of one stage share its deadline: a later call gets only what is left', async () => {
    const stage = new StageDeadline(1_000)
    await vi.advanceTimersByTimeAsync(600)
    const late = stage.within(never())
    const settled = expect(late).rejects.toMatchObject({ code: 'temporarily_unavailable', headers: { 'retry-after': '1' } })
    await vi.advanceTimersByTimeAsync(400)
    await settled
    // past the end: at once
    const after = expect(stage.within(never())).rejects.toMatchObject({ code: 'temporarily_unavailable' })
    await vi.advanceTimersByTimeAsync(0)
    await after
  })

  // Mutation: the race resolves with the timer's outcome first -> an answer in time is lost
  it('an answer or a failure within the deadline passes through, and leaves no timer behind', async () => {
    await expect(withinDeadline(MS, async () => 42)()).resolves.toBe(42)
    const refused = new AppError('unauthorized')
    await expect(
      withinDeadline(MS, async () => {
        throw refused
      })(),
    ).rejects.toBe(refused)
    // Mutation: no clearTimeout -> a timer per call stays armed for the whole deadline
    expect(vi.getTimerCount()).toBe(0)
  })

  // Mutation: no catch on the abandoned work -> its later rejection is unhandled (vitest fails the run)
  it('a dependency that fails after the deadline does not surface as an unhandled rejection', async () => {
    let fail: (err: Error) => void = () => {}
    const late = new Promise<never>((_, reject) => {
      fail = reject
    })
    const answer = new StageDeadline(10).within(late)
    const settled = expect(answer).rejects.toMatchObject({ code: 'temporarily_unavailable' })
    await vi.advanceTimersByTimeAsync(10)
    await settled
    fail(new Error('the store answered at last, with a failure'))
    await vi.advanceTimersByTimeAsync(0)
  })
})
