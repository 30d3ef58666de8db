/**
 * Issue 30: an in-flight batch holds its bytes, not its parse too. While a push's publish is
 * awaited (an fsync, Pub/Sub's answer), the parsed body (about the batch's size again, for an
 * 8 MiB batch) is garbage; only the first LISTENED_RECORDS records are kept, which the push's
 * listeners read after the answer (domain/ingest/accept.ts CheckedPush).
 *
 * A queue whose publish parks until released; every JSON parse of the pushed body is watched
 * through a WeakRef (JSON.parse wrapped for the test). With the publish parked, after a full GC:
 * the parsed body and a record past LISTENED_RECORDS are gone, the first record is not. Then the
 * push is answered 202 with its count, the queued bytes are those sent, and the listeners' sample
 * holds the first record. Over real HTTP, on the key route and the webhook route.
 * Mutation: the handler hands the listeners the records of `request.body` parsed by the content
 * type parser (the parsed body stays on the request) -> the body's WeakRef still holds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { Queue } from '@lsv/shared/ports/queue.ts'
import { LISTENED_RECORDS } from '@lsv/shared/domain/ingest/push-body.ts'
import { readPushSample } from '@lsv/shared/domain/activity/push-sample.ts'
import { body, listenIngestFixture, post, type ListeningIngestFixture, record, recordingQueue } from './support/harness.ts'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** records per push: more than the listeners are told, so the rest must go */
const RECORDS = 3 * LISTENED_RECORDS
/** a record past what the listeners are told */
const LATE = 2 * LISTENED_RECORDS

/** the recording queue; each `contact-batches` publish waits until the release that parked() gave for it */
function parkingQueue() {
  const q = recordingQueue()
  const waiting: Array<(release: () => void) => void> = []
  const queue: Queue = {
    ...q.queue,
    async publish(topic, data, attributes) {
      if (topic === 'contact-batches') await new Promise<void>((release) => waiting.shift()?.(release))
      return q.queue.publish(topic, data, attributes)
    },
  }
  /** resolves, with its release, once the next batch's publish is parked */
  const parked = () => new Promise<() => void>((r) => waiting.push(r))
  return { ...q, queue, parked }
}

/** one parse of a pushed body, watched without keeping it */
interface Watched {
  body: WeakRef<object>
  first: WeakRef<object>
  late: WeakRef<object>
}

/** Runs `during` with every JSON.parse result that is a RECORDS-record push body watched (weakly). */
async function watchingParses<T>(during: (watched: Watched[]) => Promise<T>): Promise<T> {
  const parse = JSON.parse
  const watched: Watched[] = []
  JSON.parse = ((text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown) => {
    const value: unknown = parse(text, reviver)
    const contacts = (value as { contacts?: unknown } | null)?.contacts
    if (Array.isArray(contacts) && contacts.length === RECORDS) {
      watched.push({ body: new WeakRef(value as object), first: new WeakRef(contacts[0] as object), late: new WeakRef(contacts[LATE] as object) })
    }
    return value
  }) as typeof JSON.parse
  try {
    return await during(watched)
  } finally {
    JSON.parse = parse
  }
}

describe('a batch whose publish is awaited', () => {
  const q = parkingQueue()
  let fixture: ListeningIngestFixture
  let port = 0
  beforeAll(async () => {
    fixture = await listenIngestFixture({ queue: q.queue })
    port = fixture.port
  })
  afterAll(async () => {
    await fixture?.close()
  })

  it('holds its bytes and the records its listeners read, not the parsed body', async () => {
    const { t } = fixture
    const routes: Array<{ name: string; path: string; headers: Record<string, string>; connectionId: string }> = [
      { name: 'key route', path: '/v1/contacts', headers: { authorization: `Bearer ${t.key}` }, connectionId: t.apiConnectionId },
      { name: 'webhook route', path: `/v1/contacts/${t.webhook.id}`, headers: { 'x-webhook-token': t.sourceToken }, connectionId: t.webhookConnectionId },
    ]
    for (const [n, route] of routes.entries()) {
      const records = Array.from({ length: RECORDS }, (_, i) => record(n * RECORDS + i))
      const payload = body(records)
      const before = q.batches().length
      const answer = await watchingParses(async (watched) => {
        const parked = q.parked()
        const answered = post(port, route.path, { host: t.host, 'content-type': 'application/json', ...route.headers }, payload)
        const release = await parked
        // a turn of the event loop first: a WeakRef's target is kept until the job that made it ends
        await new Promise((r) => setImmediate(r))
        gc()
        const gone = watched.map((w) => ({ body: w.body.deref() === undefined, late: w.late.deref() === undefined, first: w.first.deref() === undefined }))
        release()
        // one parse of the body; with the publish parked, only what the listeners read is left of it
        expect(gone, route.name).toEqual([{ body: true, late: true, first: false }])
        return answered
      })
      expect(answer, route.name).toEqual({ status: 202, answer: { ok: true, accepted: RECORDS, queued: true } })
      expect(
        q
          .batches()
          .slice(before)
          .map((b) => b.data.toString()),
        route.name,
      ).toEqual([payload])
      await fixture.h.deps.listeners.flush()
      expect((await readPushSample(fixture.h.deps, route.connectionId))?.record, route.name).toEqual(records[0])
    }
  })
})
