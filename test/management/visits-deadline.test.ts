/**
 * `POST …/visits` while Pub/Sub is down (issue 31): the same bounded wait as the edge's pushes,
 * a 503 `temporarily unavailable` with Retry-After once the publish has given up (the queue
 * client's own timeout, 15 s by default, 1 s here), instead of the client library's retries for
 * ten minutes (18–30 s were measured). The publish is not raced with the deadline, as the edge's
 * is not: a 503 must mean "not published" (test/management/visits-publish-past-deadline.test.ts),
 * so when the answer comes the publish has settled. The queue is the real Pub/Sub adapter pointed
 * at an address where nothing answers (a dead emulator), over real HTTP. Mutation: the publish
 * raced with the deadline again → the answer comes while the publish is still trying (the
 * `pending` check below fails).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AddressInfo } from 'node:net'
import pino from 'pino'
import { PubSub } from '@google-cloud/pubsub'
import type { App } from '@lsv/shared/http/base-app.ts'
import { createPubSubQueue } from '@lsv/shared/adapters/google/pubsub-queue.ts'
import type { Queue } from '@lsv/shared/ports/queue.ts'
import { buildApp } from '../../services/portal-api/src/app.ts'
import { freePort } from '../../scripts/lib/free-port.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { randomSuffix } from '../helpers/embedded.ts'
import { ACCOUNT_ONLY, createTestTenant } from '../helpers/tenant.ts'
import { TEST_OPERATOR_TOKEN } from '../helpers/test-secrets.ts'

let app: App
let url: string
let accountId: string
let pubsub: PubSub
let cleanup: () => Promise<void>
/** publishes that have not settled yet */
let pending = 0

beforeAll(async () => {
  // a dead emulator: a port nothing listens on, reached as the services reach the emulator
  process.env.PUBSUB_EMULATOR_HOST = `127.0.0.1:${await freePort()}`
  process.env.METADATA_SERVER_DETECTION = 'none'
  pubsub = new PubSub({ projectId: 'demo-lsv-visits' })
  const real = createPubSubQueue(pubsub, { logger: pino({ level: 'silent' }), publishTimeoutMs: 1000 })
  const queue: Queue = {
    ...real,
    publish: (...args) => {
      pending++
      return real.publish(...args).finally(() => pending--)
    },
  }
  const deps = await createTestDeps({ queue, env: { EDGE_DEPENDENCY_DEADLINE_MS: '1000' } })
  cleanup = () => deps.cleanup()
  accountId = (await createTestTenant(deps, ACCOUNT_ONLY)).accountId
  app = await buildApp(deps)
  await app.listen({ port: 0, host: '127.0.0.1' })
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
})

afterAll(async () => {
  await app?.close()
  await pubsub?.close()
  await cleanup?.()
})

describe('POST …/visits with Pub/Sub down', () => {
  it('answers 503 temporarily unavailable with Retry-After once the publish gave up, and nothing is still trying to publish', async () => {
    const res = await fetch(`${url}/api/v1/admin/accounts/${accountId}/visits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_OPERATOR_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: `evt-${randomSuffix(6)}`, tier: 'company', resolution: { company: { name: 'Acme' }, resolved_by: 'test' } }),
    })
    expect({ status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() }).toEqual({
      status: 503,
      retryAfter: '1',
      body: { ok: false, error: 'temporarily unavailable' },
    })
    // answered once the publish had settled: no publish lands after the 503
    expect(pending).toBe(0)
  }, 30_000)
})
