/**
 * Issue 31: "an answer of 503 must mean not stored, or the answer must be 202". The push path's
 * dependency deadline (shared/src/http/dependency-deadline.ts) once raced the queue publish: a
 * publish slower than the deadline was answered 503 and then completed, so the batch was queued
 * (and stored by the worker) although the client was told it was not. Now the deadline bounds only
 * the stages before the publish; once the publish has started the answer waits for its result.
 *
 * A stalled queue adapter delays each publish past the deadline and then succeeds; pushes on each
 * edge route over real HTTP must answer 202 with the batch queued, never 503 with it queued.
 * Mutation: push.ts races queuePush with afterBodyStage(...).within -> 503 while the batch is
 * queued, and the status assertion fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Queue } from '@lsv/shared/ports/queue.ts'
import { body, listenIngestFixture, post, type ListeningIngestFixture, record, recordingQueue } from './support/harness.ts'

const DEADLINE_MS = 200
/** well past the deadline: the publish is still pending when the deadline fires */
const STALL_MS = DEADLINE_MS * 3

/** the recording queue, each publish held STALL_MS before it succeeds */
function stalledQueue() {
  const q = recordingQueue()
  const queue: Queue = {
    ...q.queue,
    async publish(topic, data, attributes) {
      await new Promise((r) => setTimeout(r, STALL_MS))
      return q.queue.publish(topic, data, attributes)
    },
  }
  return { ...q, queue }
}

describe('a publish slower than the dependency deadline', () => {
  const q = stalledQueue()
  let fixture: ListeningIngestFixture
  let port = 0
  beforeAll(async () => {
    fixture = await listenIngestFixture({ queue: q.queue, config: { edgeDependencyDeadlineMs: DEADLINE_MS } })
    port = fixture.port
  })
  afterAll(async () => {
    await fixture?.close()
  })

  it('is answered 202 once it succeeds, on the key route and the webhook route, and the batch is queued once', async () => {
    const { t } = fixture
    const pushes: Array<{ path: string; headers: Record<string, string> }> = [
      { path: '/v1/contacts', headers: { authorization: `Bearer ${t.key}` } },
      { path: `/v1/contacts/${t.webhook.id}`, headers: { 'x-webhook-token': t.sourceToken } },
    ]
    for (const [i, push] of pushes.entries()) {
      const before = q.batches().length
      const res = await post(port, push.path, { host: t.host, 'content-type': 'application/json', ...push.headers }, body([record(100 + i)]))
      expect(res).toEqual({ status: 202, answer: { ok: true, accepted: 1, queued: true } })
      expect(q.batches().length).toBe(before + 1)
    }
  })
})
