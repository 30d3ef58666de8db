/**
 * Issue 31: "an answer of 503 must mean not stored, or the answer must be 202", for
 * `POST …/visits` as for the edge's pushes (test/ingest/publish-past-deadline.test.ts). The route
 * once raced the visit's publish with the dependency deadline: a publish slower than the deadline
 * was answered 503 and then landed, and the visit was delivered although the caller was told it
 * was not. Now the deadline bounds only the account lookup; once the publish has started the
 * answer waits for its result.
 *
 * A queue adapter holds each publish well past the deadline and then succeeds; over real HTTP the
 * visit must be answered 202 and be on the visit-events topic once. A queue that refuses is a 503
 * with nothing published. Mutation: visits.ts racing publishVisitEvent with the stage deadline
 * again → 503 while the visit is published, and the first assertion fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AddressInfo } from 'node:net'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { Queue } from '@lsv/shared/ports/queue.ts'
import { buildApp } from '../../services/portal-api/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { randomSuffix } from '../helpers/embedded.ts'
import { ACCOUNT_ONLY, createTestTenant } from '../helpers/tenant.ts'
import { TEST_OPERATOR_TOKEN } from '../helpers/test-secrets.ts'
import { recordingQueue } from '../ingest/support/harness.ts'

const DEADLINE_MS = 200
/** well past the deadline: the publish is still pending when the deadline fires */
const STALL_MS = DEADLINE_MS * 3

describe('POST …/visits with a publish slower than the dependency deadline', () => {
  const q = recordingQueue()
  const queue: Queue = {
    ...q.queue,
    async publish(topic, data, attributes) {
      await new Promise((r) => setTimeout(r, STALL_MS))
      return q.queue.publish(topic, data, attributes)
    },
  }
  let app: App
  let url = ''
  let accountId = ''
  let cleanup: () => Promise<void> = async () => {}

  beforeAll(async () => {
    const deps = await createTestDeps({ queue, env: { EDGE_DEPENDENCY_DEADLINE_MS: String(DEADLINE_MS) } })
    cleanup = () => deps.cleanup()
    accountId = (await createTestTenant(deps, ACCOUNT_ONLY)).accountId
    app = await buildApp(deps)
    await app.listen({ port: 0, host: '127.0.0.1' })
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await app?.close()
    await cleanup()
  })

  const send = (id: string) =>
    fetch(`${url}/api/v1/admin/accounts/${accountId}/visits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_OPERATOR_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id, tier: 'company', resolution: { company: { name: 'Acme' }, resolved_by: 'test' } }),
    })
  const visitsPublished = (id: string) => q.published.filter((m) => m.topic === 'visit-events' && JSON.parse(m.data.toString()).id === id).length

  it('is answered 202 once the publish lands, and the visit is published once', async () => {
    const id = `evt-${randomSuffix(6)}`
    const res = await send(id)
    expect({ status: res.status, body: await res.json() }).toEqual({ status: 202, body: { ok: true, id } })
    expect(visitsPublished(id)).toBe(1)
  })

  it('is answered 503 with Retry-After when the queue refuses, and nothing is published', async () => {
    const id = `evt-${randomSuffix(6)}`
    q.state.refuse = true
    try {
      const res = await send(id)
      expect({ status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() }).toEqual({
        status: 503,
        retryAfter: '1',
        body: { ok: false, error: 'temporarily unavailable' },
      })
    } finally {
      q.state.refuse = false
    }
    expect(visitsPublished(id)).toBe(0)
  })
})
