/** Something under way that must end by its deadline. */
export interface Expiring {
  /** called once, at or after the deadline, unless removed first */
  expire(): void
}

/** One bound shared by many exchanges under way. */
export interface Deadlines {
  readonly boundMs: number
  /** starts `item`'s bound now */
  add(item: Expiring): void
  /** `item` ended in time (a no-op for one never added, removed or expired) */
  remove(item: Expiring): void
  /** how many are under way */
  readonly size: number
  /** whether the sweep's timer is set (it is only while something is under way) */
  readonly sweeping: boolean
}

export interface DeadlinesOptions {
  boundMs: number
  /** how often the sweep looks: an item expires at most this much after its bound (default a 60th of the bound, at most 250 ms) */
  everyMs?: number
  /** a monotonic clock in ms */
  now?: () => number
}

/**
 * Deadlines for many items that all get the same bound. Every item shares one bound, so items
 * expire in the order they were added: a Map keeps that order, and the sweep stops at the first
 * item still in time. One unref'd interval runs while anything is under way, and stops itself
 * once nothing is; an item costs a map insert and delete, not a timer of its own (a timer and
 * an AbortController per webhook send were about 50 µs of a delivery's main-thread CPU).
 */
export function createDeadlines(options: DeadlinesOptions): Deadlines {
  const { boundMs } = options
  const everyMs = options.everyMs ?? Math.min(250, Math.max(1, Math.floor(boundMs / 60)))
  const now = options.now ?? (() => performance.now())
  /** each item under way and its deadline, in the order added (= the order of their deadlines) */
  const underWay = new Map<Expiring, number>()
  let timer: NodeJS.Timeout | null = null

  function sweep(): void {
    const t = now()
    for (const [item, deadline] of underWay) {
      if (deadline > t) break
      underWay.delete(item)
      try {
        item.expire()
      } catch {
        // one item's failure to stop must not keep the others past their bound
      }
    }
    // stopped from inside the sweep, not on each removal: a steady stream of sends that each
    // empty the map would otherwise set and clear the interval once per send
    if (underWay.size === 0 && timer) {
      clearInterval(timer)
      timer = null
    }
  }

  return {
    boundMs,
    add(item) {
      underWay.set(item, now() + boundMs)
      if (!timer) timer = setInterval(sweep, everyMs).unref()
    },
    remove(item) {
      underWay.delete(item)
    },
    get size() {
      return underWay.size
    },
    get sweeping() {
      return timer !== null
    },
  }
}
