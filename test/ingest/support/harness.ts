import { request } from 'node:http'
import type { Queue, QueueMessage } from '@lsv/shared/ports/queue.ts'
import type { Topic } from '@lsv/shared/model/topics.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { buildApp as buildEdge } from '../../../services/edge-ingest/src/app.ts'
import { buildApp as buildPortal } from '../../../services/portal-api/src/app.ts'
import { expect } from 'vitest'
import { createTestDeps, type TestDepsOptions } from '../../helpers/deps.ts'
import { createTestTenant, type StoredTenant } from '../../helpers/tenant.ts'

interface Published extends QueueMessage {
  topic: Topic
}

/**
 * A Queue that records what is published (as the messages a subscriber would get) and refuses
 * publishes while `refuse` is set: the 503 / synchronous-fallback cases.
 */
export function recordingQueue() {
  const published: Published[] = []
  const state = { refuse: false }
  const queue: Queue = {
    async publish(topic, data, attributes = {}) {
      if (state.refuse) throw new Error('queue unavailable (test)')
      const id = `m-${published.length + 1}`
      published.push({ topic, id, data, attributes, deliveryAttempt: 1, publishedAt: new Date().toISOString() })
      return id
    },
    async subscribe() {
      return { close: async () => {} }
    },
    async subscribeDeadLetters() {
      return { close: async () => {} }
    },
    async close() {},
  }
  return {
    queue,
    published,
    state,
    batches: () => published.filter((p) => p.topic === 'contact-batches'),
    changes: () => published.filter((p) => p.topic === 'contact-changes'),
    deadLetters: () => published.filter((p) => (p.topic as string) === 'contact-batches-dead-letter'),
  }
}

export type Injectable = Awaited<ReturnType<typeof buildEdge>>

export interface Harness {
  deps: PlatformDeps & { cleanup(): Promise<void> }
  edge: Injectable
  portal: Injectable
  q: ReturnType<typeof recordingQueue>
  close(): Promise<void>
}

/** Deps (embedded adapters, recording queue unless one is given) plus the edge and portal apps. */
export async function createHarness(options: TestDepsOptions = {}): Promise<Harness> {
  const q = recordingQueue()
  const deps = await createTestDeps({ queue: q.queue, ...options })
  const edge = await buildEdge(deps)
  const portal = await buildPortal(deps)
  return {
    deps,
    edge,
    portal,
    q,
    async close() {
      await edge.close()
      await portal.close()
      await deps.cleanup()
    },
  }
}

export const body = (contacts: unknown[]) => JSON.stringify({ contacts })

/** A valid inbound record with a unique external id. */
export function record(i: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { external_id: `ext-${i}`, email: `Person${i}@Example.com`, first_name: `First${i}`, last_name: `Last${i}`, ...extra }
}

/** The harness and two tenants of their own (`other` for cross-tenant checks), closed together. */
export interface IngestFixture {
  h: Harness
  t: StoredTenant
  other: StoredTenant
  close(): Promise<void>
}

export async function createIngestFixture(options: TestDepsOptions = {}): Promise<IngestFixture> {
  const h = await createHarness(options)
  const t = await createTestTenant(h.deps)
  const other = await createTestTenant(h.deps)
  return {
    h,
    t,
    other,
    async close() {
      await t.cleanup()
      await other.cleanup()
      await h.close()
    },
  }
}

/** The contract's error envelope with exactly this status and text. */
export function expectError(res: { statusCode: number; json(): unknown }, status: number, error: string): void {
  expect(res.statusCode).toBe(status)
  expect(res.json()).toEqual({ ok: false, error })
}

export type ListeningIngestFixture = IngestFixture & { port: number }

/** The fixture's edge listening on a free loopback port: for tests that push over real HTTP. */
export async function listenIngestFixture(options: TestDepsOptions = {}): Promise<ListeningIngestFixture> {
  const fixture = await createIngestFixture(options)
  await fixture.h.edge.listen({ port: 0, host: '127.0.0.1' })
  const address = fixture.h.edge.server.address()
  if (!address || typeof address === 'string') throw new Error('the edge has no port')
  return { ...fixture, port: address.port }
}

/** a POST over loopback with its own Host header (fetch does not send one it is given) */
export function post(port: number, path: string, headers: Record<string, string>, payload: string): Promise<{ status: number; answer: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, answer: JSON.parse(Buffer.concat(chunks).toString()) as unknown }))
    })
    req.on('error', reject)
    req.end(payload)
  })
}
