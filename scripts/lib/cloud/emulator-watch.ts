/**
 * Watches the Firestore and Pub/Sub emulators while start:cloud runs. An emulator keeps its data
 * in memory, so one that died cannot be started again without losing what it held, and starting
 * an empty one in its place would pass for a working platform with its data gone. So start:cloud
 * only says it, once, on the terminal: which emulator, that its data is lost, and what to do.
 * The services see it themselves: their /readyz answers 503 naming the store or the queue
 * (shared/src/http/readiness.ts). Should the emulator answer again (one the developer runs and
 * restarted), that is said too.
 */

/** Between two looks at each emulator. */
const INTERVAL_MS = 2_000
/** Looks in a row without an answer before an emulator counts as dead (one slow answer is not death). */
const MISSES = 2

export interface EmulatorWatch {
  stop(): void
}

/** Whether anything answers HTTP at `hostPort` (both emulators answer `GET /` with 200 "Ok"). */
async function answers(hostPort: string): Promise<boolean> {
  try {
    const res = await fetch(`http://${hostPort}/`, { signal: AbortSignal.timeout(INTERVAL_MS) })
    await res.arrayBuffer()
    return true
  } catch {
    return false
  }
}

export function watchEmulators(emulators: { firestore: string; pubsub: string }, say: (line: string) => void, intervalMs = INTERVAL_MS): EmulatorWatch {
  const misses = new Map<string, number>()
  const dead = new Set<string>()
  let looking = false
  const look = async () => {
    if (looking) return
    looking = true
    try {
      for (const [name, hostPort] of Object.entries(emulators)) {
        if (await answers(hostPort)) {
          misses.set(name, 0)
          if (dead.delete(name)) say(`the ${name} emulator at ${hostPort} answers again (empty if it was restarted: what it held is gone)`)
          continue
        }
        const n = (misses.get(name) ?? 0) + 1
        misses.set(name, n)
        if (n >= MISSES && !dead.has(name)) {
          dead.add(name)
          say(
            `the ${name} emulator at ${hostPort} does not answer: it has died, and the data it held in memory with it. ` +
              'start:cloud cannot start it again without losing that data, so it does not; the services now answer 503 on /readyz. ' +
              'Stop with Ctrl-C and run npm run start:cloud again (its emulator log is in the logs folder).',
          )
        }
      }
    } finally {
      looking = false
    }
  }
  const timer = setInterval(() => void look(), intervalMs)
  timer.unref()
  return { stop: () => clearInterval(timer) }
}
