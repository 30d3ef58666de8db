import { AppError } from '../errors/app-error.ts'

/**
 * Deadlines on the edge's push path (issue 23; docs/architecture.md, "Dependency deadlines"). A
 * stalled Firestore or Pub/Sub would otherwise hold a push until the client library's own
 * timeouts (15 s for a publish, 60 s and more for Firestore) or until the client gives up: with
 * the Firestore emulator paused 20 s, pushes hung 19.9 s and then answered 202. A push has two
 * dependency stages, each bounded by EDGE_DEPENDENCY_DEADLINE_MS (config): the checks before
 * the body (tenant lookup, credential, rate limit) and the partner CRM's checks after it. A stage
 * that has not settled in time answers 503 `temporarily unavailable`, which the contract says is
 * safe to retry, with `Retry-After`. The queue publish is never raced with a deadline: a 503 must
 * mean "not stored" (issue 31), and a publish cut by a deadline may still complete, so the answer
 * waits for the publish's own result (202 when it held, 503 when the queue refused it).
 */

/** the 503 a stage that outlived its deadline answers: retry after about one deadline */
function deadlineExceeded(ms: number): AppError {
  return new AppError('temporarily_unavailable', {
    headers: { 'retry-after': String(Math.max(1, Math.ceil(ms / 1000))) },
    cause: new Error(`no answer from a dependency within ${ms} ms`),
  })
}

/**
 * One stage's deadline, fixed when the stage starts: every call raced with `within` shares it,
 * so a stage of several calls (partner CRM: location check, rate limit, publish) is bounded as a
 * whole, not per call.
 */
export class StageDeadline {
  readonly #ms: number
  readonly #endsAt: number

  constructor(ms: number, now: number = performance.now()) {
    this.#ms = ms
    this.#endsAt = now + ms
  }

  /**
   * `work`, or the 503 once the stage's deadline passes without it settling. The abandoned call
   * keeps running until its own library gives up, so `work` must be one whose late success
   * stores nothing the 503 denies (a read, a rate-limit claim), never a durable write.
   */
  within<T>(work: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // whole milliseconds: node keeps one timer list per distinct duration, and the fractional
      // ones performance.now() gives made a list and a priority-queue entry for every call
      const timer = setTimeout(() => reject(deadlineExceeded(this.#ms)), Math.max(0, Math.ceil(this.#endsAt - performance.now())))
      // settles once: the loser of the two is ignored, and a late rejection of the abandoned work
      // is handled here (it never becomes an unhandled one)
      work.then(
        (value) => {
          clearTimeout(timer)
          resolve(value)
        },
        (err: unknown) => {
          clearTimeout(timer)
          reject(err)
        },
      )
    })
  }
}

/** `fn` as one stage: each call gets a fresh deadline of `ms` for everything it awaits. */
export function withinDeadline<A extends unknown[], T>(ms: number, fn: (...args: A) => Promise<T>): (...args: A) => Promise<T> {
  return (...args: A) => new StageDeadline(ms).within(fn(...args))
}
