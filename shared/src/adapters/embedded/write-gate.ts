/**
 * Turns at the write lock for connections to one database file from several threads of one
 * process (the local stack: the main thread serving requests, a consumer thread applying
 * batches; platform/background-thread.ts).
 *
 * SQLite's write lock is not fair: a writer that finds it taken sleeps (busy_timeout: 1, 2, 5, …
 * up to 100 ms) and tries again, and a thread writing transactions back to back takes it again
 * in the microseconds between two of them. With the upsert worker's consumer on a thread and
 * nothing else, the main thread's writes (a push's rate-limit window and its queued batch)
 * waited seconds, asleep inside SQLite on the event loop: `/healthz` p99 2.1 s under load
 * (docs/performance.md). The gate is two counters in memory the threads share:
 *
 * - `serving` (the main thread): announces that it wants the lock (WANT) for as long as it has
 *   writes pending; its grouped writes wait, off the event loop (Atomics.waitAsync), while a
 *   background transaction is under way (HELD), and a plain transaction waits for its end
 *   (Atomics.wait: woken the moment it ends instead of at the busy handler's next retry);
 * - `background` (a consumer thread): before each transaction waits, blocking only its own
 *   thread, while the serving side wants the lock, at most MAX_YIELD_MS so it is never starved;
 *   a long transaction (a chunk of a batch's upserts, 500 documents: 75 ms of CPU, several times
 *   that in wall-clock time on a busy machine) commits early once it held the lock MIN_HOLD_MS
 *   while the serving side wants it (`yieldRequested`: the contact store asks between documents).
 *
 * The serving side thus waits for a background transaction a few milliseconds at most. Other processes
 * on the same file (a second `npm start`, a service process) are not in the gate: busy_timeout
 * still orders them, as before.
 */

/** the serving side wants the lock: writes pending or a transaction under way */
const WANT = 0
/** background transactions under way */
const HELD = 1
/** serving transactions under way (0 or 1: one connection), what an exclusive turn waits out */
const IN_TX = 2
/** an exclusive background turn waits at most this long for the serving transaction under way */
const MAX_EXCLUSIVE_WAIT_MS = 100
/** a background writer waits at most this long for the serving side per transaction */
const MAX_YIELD_MS = 50
/** a background transaction commits early for the serving side only after holding the lock this long (progress) */
const MIN_HOLD_MS = 5
/**
 * the serving side waits for background transactions at most this long, then leaves the rest to
 * SQLite's busy handler: a thread that died inside a transaction never leaves the gate (SQLite
 * rolls its connection back when the thread ends), and the event loop must not wait on it forever
 */
const MAX_SERVING_WAIT_MS = 250

export interface WriteGate {
  /** shared by every connection in the gate (createWriteGateBuffer) */
  buffer: SharedArrayBuffer
  role: 'serving' | 'background'
}

export function createWriteGateBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT)
}

export interface GateTurns {
  /** before a transaction on this connection (background: may block its thread for a turn) */
  enter(): void
  /** after it committed or rolled back */
  leave(): void
  /** serving: writes are pending from now until `done()` */
  want(): void
  done(): void
  /** serving: resolves once no background transaction is under way; null when none is */
  clear(): Promise<void> | null
  /** background: the serving side waits for the transaction under way, which held the lock long enough to commit early */
  yieldRequested(): boolean
  /**
   * background: runs fn once the serving transaction under way (if any) has ended, with the
   * serving side's new transactions and grouped writes waiting for its end, not stepping back for
   * them. For short steps that must see no serving commit meanwhile (the maintenance thread's
   * last checkpoint pass); the wait for the serving side is bounded like every other in the gate.
   */
  exclusive<T>(fn: () => T): T
}

/** what a side does for the calls that belong to the other one: nothing */
const NOTHING: GateTurns = { enter() {}, leave() {}, want() {}, done() {}, clear: () => null, yieldRequested: () => false, exclusive: (fn) => fn() }

export function gateTurns(gate: WriteGate): GateTurns {
  const cells = new Int32Array(gate.buffer)
  if (gate.role === 'background') {
    let heldSince = 0
    return {
      ...NOTHING,
      enter() {
        const deadline = performance.now() + MAX_YIELD_MS
        for (;;) {
          // mark first, then look: of two sides arriving together at least one sees the other,
          // and the background one steps back
          Atomics.add(cells, HELD, 1)
          const wanted = Atomics.load(cells, WANT)
          const left = deadline - performance.now()
          heldSince = performance.now()
          if (wanted === 0 || left <= 0) return
          Atomics.sub(cells, HELD, 1)
          Atomics.notify(cells, HELD)
          Atomics.wait(cells, WANT, wanted, left)
        }
      },
      leave() {
        Atomics.sub(cells, HELD, 1)
        Atomics.notify(cells, HELD)
      },
      yieldRequested: () => Atomics.load(cells, WANT) > 0 && performance.now() - heldSince >= MIN_HOLD_MS,
      exclusive(fn) {
        // held first, then look: a serving transaction starting now sees it and waits (enter)
        Atomics.add(cells, HELD, 1)
        try {
          const deadline = performance.now() + MAX_EXCLUSIVE_WAIT_MS
          for (let inTx = Atomics.load(cells, IN_TX); inTx > 0; inTx = Atomics.load(cells, IN_TX)) {
            const left = deadline - performance.now()
            if (left <= 0) break
            Atomics.wait(cells, IN_TX, inTx, left)
          }
          return fn()
        } finally {
          Atomics.sub(cells, HELD, 1)
          Atomics.notify(cells, HELD)
        }
      },
    }
  }
  const want = () => {
    Atomics.add(cells, WANT, 1)
  }
  const done = () => {
    Atomics.sub(cells, WANT, 1)
    Atomics.notify(cells, WANT)
  }
  return {
    enter() {
      want()
      // a background transaction under way: wait for its end here rather than in SQLite's busy
      // handler. Marked under way first, then look: an exclusive turn arriving at the same moment
      // either is seen here (and this side steps back and waits) or sees this transaction and
      // waits for its end
      const deadline = performance.now() + MAX_SERVING_WAIT_MS
      for (;;) {
        Atomics.add(cells, IN_TX, 1)
        const held = Atomics.load(cells, HELD)
        const left = deadline - performance.now()
        if (held === 0 || left <= 0) return
        Atomics.sub(cells, IN_TX, 1)
        Atomics.notify(cells, IN_TX)
        Atomics.wait(cells, HELD, held, left)
      }
    },
    leave() {
      Atomics.sub(cells, IN_TX, 1)
      Atomics.notify(cells, IN_TX)
      done()
    },
    want,
    done,
    yieldRequested: () => false,
    exclusive: (fn) => fn(),
    clear() {
      if (Atomics.load(cells, HELD) === 0) return null
      return (async () => {
        const deadline = performance.now() + MAX_SERVING_WAIT_MS
        for (let held = Atomics.load(cells, HELD); held > 0; held = Atomics.load(cells, HELD)) {
          const left = deadline - performance.now()
          if (left <= 0) return
          await Atomics.waitAsync(cells, HELD, held, left).value
        }
      })()
    },
  }
}
