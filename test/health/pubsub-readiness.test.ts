/**
 * /readyz covers the queue when it is Pub/Sub (issue 31): with the emulator dead, every service's
 * readiness must fail, not answer 200 as if nothing happened. A Pub/Sub emulator of this test's
 * own, stopped by pid halfway; the readiness check is the production one (serviceReadiness with
 * the Pub/Sub adapter's round trip), over real HTTP.
 */
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pino from 'pino'
import { PubSub } from '@google-cloud/pubsub'
import { buildBaseApp, type App } from '@lsv/shared/http/base-app.ts'
import { serviceReadiness } from '@lsv/shared/http/readiness.ts'
import { createPubSubQueue } from '@lsv/shared/adapters/google/pubsub-queue.ts'
import { startEmulator, type RunningEmulator } from '../../scripts/lib/emulators.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { waitFor } from '../conformance/suites/wait.ts'
import { cleanUp, tempDir } from '../cloud/support.ts'

const logger = pino({ level: 'silent' })
let emulator: RunningEmulator
let pubsub: PubSub
let app: App
let port: number
let cleanupDeps: () => Promise<void>

beforeAll(async () => {
  emulator = await startEmulator('pubsub', tempDir('lsv-pubsub-ready-'), 'demo-lsv-ready')
  // as the services find it (deps.ts): through the environment, no credentials, no metadata server
  process.env.PUBSUB_EMULATOR_HOST = emulator.hostPort
  process.env.METADATA_SERVER_DETECTION = 'none'
  pubsub = new PubSub({ projectId: 'demo-lsv-ready' })
  const d = await createTestDeps()
  cleanupDeps = () => d.cleanup()
  const queue = createPubSubQueue(pubsub, { logger, createMissing: true })
  app = buildBaseApp({ logger, readiness: serviceReadiness({ ...d, queue }, ['tenants', 'queue'], { intervalMs: 100, timeoutMs: 2_000 }) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  port = (app.server.address() as AddressInfo).port
}, 120_000)

afterAll(async () => {
  await app?.close()
  await pubsub?.close()
  await emulator?.stop()
  await cleanupDeps?.()
  await cleanUp()
})

const readyz = async () => {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`)
  return { status: res.status, body: (await res.json()) as unknown }
}

describe('/readyz with Pub/Sub as the queue', () => {
  it('200 while the emulator answers; 503 naming the queue once it is dead (mutation: no round trip in the queue check → 200)', async () => {
    await waitFor(async () => (await readyz()).status === 200, 'ready with the emulator up')
    expect(await readyz()).toEqual({ status: 200, body: { ok: true } })
    await emulator.stop()
    await waitFor(async () => (await readyz()).status === 503, 'not ready once Pub/Sub is dead', 30_000)
    expect(await readyz()).toEqual({ status: 503, body: { ok: false, reasons: ['queue'] } })
  }, 60_000)
})
