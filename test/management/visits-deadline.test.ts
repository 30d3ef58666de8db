/**
 * `POST …/visits` while Pub/Sub is down (issue 31): the same bounded wait as the edge's pushes,
 * a 503 `temporarily unavailable` with Retry-After once EDGE_DEPENDENCY_DEADLINE_MS has passed,
 * instead of waiting out the client library's own retries (18–30 s were measured). The queue is
 * the real Pub/Sub adapter pointed at an address where nothing answers (a dead emulator), over
 * real HTTP. Mutation: the publish not raced with the deadline → no Retry-After, and the answer
 * comes only after the publish gave up (the `pending` check below fails).
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
  const real = createPubSubQueue(pubsub, { logger: pino({ level: 'silent' }) })
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
  it('answers 503 temporarily unavailable with Retry-After once the dependency deadline passed, while the publish is still trying', async () => {
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
    // answered by the deadline, not by the client library giving up (its publish timeout is 15 s)
    expect(pending).toBe(1)
  }, 30_000)
})
