import type { QueueRate } from '../../ports/task-scheduler.ts'

interface Bucket {
  tokens: number
  at: number
}

/**
 * What each queue may dispatch, per process: at most maxDispatchesPerSecond (a token bucket,
 * burst = the rate, refilled by the injected clock's elapsed time) and at most
 * maxConcurrentDispatches at a time.
 */
export class DispatchBudget {
  #buckets = new Map<string, Bucket>()
  #running = new Map<string, number>()

  /** whole dispatches `queue` may start at `now` */
  free(queue: string, rate: QueueRate, now: number): number {
    const bucket = this.#refilled(queue, rate, now)
    return Math.min(Math.floor(bucket.tokens), rate.maxConcurrentDispatches - (this.#running.get(queue) ?? 0))
  }

  /** `count` dispatches of `queue` were claimed: their tokens are spent */
  spend(queue: string, count: number): void {
    const bucket = this.#buckets.get(queue)
    if (bucket) bucket.tokens -= count
  }

  /** runs one dispatch of `queue`, counted as running until it settles */
  async running<T>(queue: string, dispatch: () => Promise<T>): Promise<T> {
    this.#running.set(queue, (this.#running.get(queue) ?? 0) + 1)
    try {
      return await dispatch()
    } finally {
      this.#running.set(queue, (this.#running.get(queue) ?? 1) - 1)
    }
  }

  /** the queue's bucket, refilled by the clock time elapsed since it was last looked at */
  #refilled(queue: string, rate: QueueRate, now: number): Bucket {
    const burst = Math.max(1, rate.maxDispatchesPerSecond)
    let bucket = this.#buckets.get(queue)
    if (!bucket) {
      bucket = { tokens: burst, at: now }
      this.#buckets.set(queue, bucket)
    }
    const elapsed = Math.max(0, now - bucket.at)
    bucket.tokens = Math.min(burst, bucket.tokens + (elapsed / 1000) * rate.maxDispatchesPerSecond)
    bucket.at = now
    return bucket
  }
}
