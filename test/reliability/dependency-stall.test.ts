/**
 * Issue 23, "Recovery in seconds": when a dependency stalls, the edge answers within a bound.
 *
 * The test starts a Firestore emulator of its own (scripts/lib/emulators.ts; pausing the suite's
 * shared one would stall every other test) and runs edge-ingest on it, with the Pub/Sub emulator
 * as the queue. One push lands first (202). Then the emulator's java process (found among the
 * gcloud wrapper's descendants by pid) is stopped with SIGSTOP for PAUSE_MS, and waves of pushes
 * are sent: every answer must arrive within the bound (two dependency stages, each cut at
 * EDGE_DEPENDENCY_DEADLINE_MS, plus a margin) and be a 503 `temporarily unavailable` with
 * Retry-After (a 202 only for a push whose stages all settled). After SIGCONT every refused push is retried until it is
 * accepted, the upsert worker runs, and every record of every push must be in Firestore.
 * Mutation: StageDeadline.within returns `work` unraced -> the pushes hang until SIGCONT (PAUSE_MS,
 * over the bound) and then answer 202, and the bound assertion fails.
 * Mutation: retryable() maps every failure to a 500 -> the status assertion fails.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { PubSub } from '@google-cloud/pubsub'
import { createPubSubQueue } from '@lsv/shared/adapters/google/pubsub-queue.ts'
import { startEmulator, type RunningEmulator } from '../../scripts/lib/emulators.ts'
import { descendantsOf } from '../../scripts/lib/process-tree.ts'
import { startUpsertWorkerBackground } from '../../services/upsert-worker/src/background.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { emulators, randomSuffix } from '../helpers/embedded.ts'
import { createTestTenant } from '../helpers/tenant.ts'
import { printFigure } from './support/figures.ts'

const PAUSE_MS = 20_000
/** EDGE_DEPENDENCY_DEADLINE_MS, its default (the test runs with it) */
const DEADLINE_MS = 5_000
/** the checks before the body and the work after it: two stages, each cut at the deadline */
const BOUND_MS = 2 * DEADLINE_MS + 1_500
const WAVE = 4
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const cleanups: Array<() => Promise<void> | void> = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
}, 120_000)

/** the emulator's JVM: gcloud is a wrapper (shell, then python) that starts java */
function javaOf(emulator: RunningEmulator): number {
  const javas = descendantsOf(emulator.child.pid!).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'java'
    } catch {
      return false
    }
  })
  expect(javas, 'one java process under the Firestore emulator').toHaveLength(1)
  return javas[0]!
}

describe.skipIf(!emulators.pubsub)('a stalled Firestore on the edge push path', () => {
  it(`Firestore paused ${PAUSE_MS / 1000} s: every push answers within ${BOUND_MS} ms, 503 or 202; after SIGCONT the retries land and nothing is lost`, async () => {
    const logDir = mkdtempSync(join(tmpdir(), 'lsv-stall-'))
    cleanups.push(() => rmSync(logDir, { recursive: true, force: true }))
    const firestore = await startEmulator('firestore', logDir, emulators.project)
    cleanups.push(() => firestore.stop())
    // the Firestore client reads its emulator from the environment, not from the config
    const sharedHost = process.env.FIRESTORE_EMULATOR_HOST
    process.env.FIRESTORE_EMULATOR_HOST = firestore.hostPort
    cleanups.push(() => {
      if (sharedHost === undefined) delete process.env.FIRESTORE_EMULATOR_HOST
      else process.env.FIRESTORE_EMULATOR_HOST = sharedHost
    })
    const queue = createPubSubQueue(new PubSub({ projectId: emulators.project }), {
      logger: pino({ level: 'silent' }),
      createMissing: true,
      namePrefix: `stall-${randomSuffix(4)}-`,
    })
    const deps = await createTestDeps({ backend: 'emulators', queue, env: { FIRESTORE_EMULATOR_HOST: firestore.hostPort } })
    expect(deps.config.edgeDependencyDeadlineMs).toBe(DEADLINE_MS)
    cleanups.push(() => deps.cleanup())
    const t = await createTestTenant(deps)
    const edge = await buildEdge(deps)
    cleanups.push(() => edge.close())

    let next = 0
    const push = async (ids: string[]) => {
      const started = performance.now()
      const res = await edge.inject({
        method: 'POST',
        url: '/v1/contacts',
        headers: t.keyHeaders(),
        payload: JSON.stringify({ contacts: ids.map((id) => ({ external_id: id, email: `${id}@example.com` })) }),
      })
      return { ids, status: res.statusCode, retryAfter: res.headers['retry-after'], body: res.json() as { error?: string }, ms: performance.now() - started }
    }
    const batch = () => [`stall-${next++}`, `stall-${next++}`]

    // durable before the pause: the tenant is cached, the store and queue are warm
    const before = await push(batch())
    expect(before.status, JSON.stringify(before.body)).toBe(202)

    const java = javaOf(firestore)
    process.kill(java, 'SIGSTOP')
    let paused = true
    const resume = () => {
      if (paused) process.kill(java, 'SIGCONT')
      paused = false
    }
    cleanups.push(resume)
    const pausedAt = performance.now()
    // the pause ends on its own clock: pushes that hang (no deadline) must not hold it open
    const timer = setTimeout(resume, PAUSE_MS)
    const during: Awaited<ReturnType<typeof push>>[] = []
    // waves of concurrent pushes for as long as a whole bound still fits inside the pause
    while (performance.now() - pausedAt < PAUSE_MS - BOUND_MS) {
      during.push(...(await Promise.all(Array.from({ length: WAVE }, () => push(batch())))))
    }
    // every wave answered (pushes that hang return only once the timer resumed it): the stall has
    // shown what it shows, and the rest of the pause would only be waited out
    clearTimeout(timer)
    resume()

    const longest = Math.max(...during.map((r) => r.ms))
    printFigure(
      'edge push during a Firestore stall',
      `${during.length} pushes while paused ${PAUSE_MS / 1000} s; longest answer ${Math.round(longest)} ms (deadline ${DEADLINE_MS} ms per stage); ${during.filter((r) => r.status === 503).length} answered 503, ${during.filter((r) => r.status === 202).length} answered 202`,
    )
    expect(during.length).toBeGreaterThanOrEqual(WAVE)
    for (const r of during) {
      expect(r.ms, `push ${r.ids.join(',')}`).toBeLessThan(BOUND_MS)
      expect([202, 503], JSON.stringify(r.body)).toContain(r.status)
      if (r.status === 503) {
        expect(r.body).toEqual({ ok: false, error: 'temporarily unavailable' })
        // Mutation: deadlineExceeded without headers -> no Retry-After
        expect(r.retryAfter).toBe('5')
      }
    }
    expect(
      during.some((r) => r.status === 503),
      'a stalled store refuses at least one push',
    ).toBe(true)

    // the client's retries after SIGCONT: each refused push until it is accepted
    for (const r of during.filter((x) => x.status !== 202)) {
      let status = 0
      for (let attempt = 0; attempt < 60 && status !== 202; attempt++) {
        if (attempt > 0) await sleep(500)
        status = (await push(r.ids)).status
      }
      expect(status, `retry of ${r.ids.join(',')}`).toBe(202)
    }

    // nothing lost: every record of every push is upserted
    const worker = await startUpsertWorkerBackground(deps)
    cleanups.push(() => worker.close())
    const missing = new Set(Array.from({ length: next }, (_, i) => `stall-${i}`))
    for (let i = 0; i < 600 && missing.size > 0; i++) {
      for (const id of [...missing]) if (await deps.contacts.getByAnchor(t.account.id, 'crm', id)) missing.delete(id)
      if (missing.size > 0) await sleep(100)
    }
    expect([...missing], 'records never upserted').toEqual([])
  })
})
