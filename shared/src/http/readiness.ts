import type { PlatformDeps } from '../ports/deps.ts'

/**
 * Whether a service can do its work, as `/readyz` reports it (base-app.ts). The answer comes from
 * state kept here, never from a check run for the request: a probe that hangs (a store that does
 * not answer) must not make the probe hang, and a loaded event loop must not multiply store calls.
 *
 * Not ready while starting (before the app listens and the first round of checks passed), while
 * draining (from the moment the app starts closing), and while a dependency's last check failed
 * or took longer than its timeout. Checks run in the background every `intervalMs`. base-app.ts
 * starts it when the app listens (an app only injected into never checks anything), drains it
 * when the app starts closing and stops it once closed.
 */
interface ReadinessReport {
  ready: boolean
  /** why not: `starting`, `draining`, or the names of the failing dependencies (never error text: /readyz is public on the edge) */
  reasons: string[]
}

/** A dependency check: resolves when the dependency answered, throws or rejects when it did not. */
export type Check = () => Promise<unknown> | unknown

export interface ReadinessOptions {
  /** between two rounds of checks (default 10 s) */
  intervalMs?: number
  /** a check still running after this long counts as failed (default 2 s) */
  timeoutMs?: number
}

export interface Readiness {
  report(): ReadinessReport
  /** runs a first round of checks and then keeps checking; the service counts as started once the first round is done */
  start(): Promise<void>
  /** one round of checks now (tests; a round already running is joined) */
  refresh(): Promise<void>
  /** from now on not ready: the service is shutting down */
  drain(): void
  stop(): void
}

const TIMED_OUT = Symbol('timed out')

export function createReadiness(checks: Record<string, Check>, options: ReadinessOptions = {}): Readiness {
  const intervalMs = options.intervalMs ?? 10_000
  const timeoutMs = options.timeoutMs ?? 2_000
  const failing = new Set<string>()
  /** checks still running: a hung one is not started again, and stays failed until it answers */
  const running = new Map<string, Promise<void>>()
  let started = false
  let draining = false
  let timer: NodeJS.Timeout | null = null
  let round: Promise<void> | null = null

  const checkOne = (name: string, check: Check): Promise<void> => {
    const already = running.get(name)
    if (already) {
      failing.add(name) // still not answered since the last round
      return Promise.resolve()
    }
    const done = (async () => {
      try {
        await check()
        failing.delete(name)
      } catch {
        failing.add(name)
      }
    })().finally(() => running.delete(name))
    running.set(name, done)
    let timeout: NodeJS.Timeout | undefined
    const limit = new Promise<typeof TIMED_OUT>((resolve) => {
      timeout = setTimeout(() => resolve(TIMED_OUT), timeoutMs)
    })
    return Promise.race([done, limit]).then((result) => {
      clearTimeout(timeout)
      if (result === TIMED_OUT) failing.add(name)
    })
  }

  const refresh = (): Promise<void> => {
    round ??= Promise.all(Object.entries(checks).map(([name, check]) => checkOne(name, check)))
      .then(() => undefined)
      .finally(() => {
        round = null
      })
    return round
  }

  return {
    report() {
      const reasons = [...(started ? [] : ['starting']), ...(draining ? ['draining'] : []), ...[...failing].sort()]
      return { ready: reasons.length === 0, reasons }
    },
    async start() {
      if (timer) return
      timer = setInterval(() => void refresh(), intervalMs)
      timer.unref()
      await refresh()
      started = true
    },
    refresh,
    drain() {
      draining = true
    },
    stop() {
      if (timer) clearInterval(timer)
      timer = null
    },
  }
}

/** What a service needs working to do its job. */
export type Dependency = 'tenants' | 'contacts' | 'queue'

/**
 * Checks on the service's ports: a read of a record that does not exist (a round trip to the
 * store: embedded, a point read on the open file; Firestore, one document read per interval), and
 * the queue's own health where the adapter reports it (embedded: the file open, every subscription
 * of this process claiming without error) and a round trip to it where it is remote (Pub/Sub:
 * one TestIamPermissions per interval).
 */
function dependencyChecks(deps: Pick<PlatformDeps, 'tenants' | 'contacts' | 'queue'>, needs: readonly Dependency[]): Record<string, Check> {
  const all: Record<Dependency, Check> = {
    tenants: () => deps.tenants.getAccount('readiness-check'),
    contacts: () => deps.contacts.get('readiness-check', 'readiness-check'),
    queue: async () => {
      const health = deps.queue.health?.()
      if (health && !health.ok) throw new Error(health.reason ?? 'queue unhealthy')
      // Pub/Sub: one round trip per interval, so a dead emulator or an unreachable service shows
      await deps.queue.ping?.()
    },
  }
  return Object.fromEntries(needs.map((n) => [n, all[n]]))
}

/** The readiness of a service that needs `needs` (its app.ts hands it to buildBaseApp). */
export function serviceReadiness(
  deps: Pick<PlatformDeps, 'tenants' | 'contacts' | 'queue'>,
  needs: readonly Dependency[],
  options: ReadinessOptions = {},
): Readiness {
  return createReadiness(dependencyChecks(deps, needs), options)
}
