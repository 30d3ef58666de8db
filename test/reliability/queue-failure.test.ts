import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Queue } from '@lsv/shared/ports/queue.ts'
import type { Topic } from '@lsv/shared/model/topics.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { createTestTenant, type ManagedTenant } from '../helpers/tenant.ts'
import { RELIABILITY_TENANT, contactRecord, type Injectable } from './support/requests.ts'
import { printFigure } from './support/figures.ts'

/**
 * Item 3: a queue that refuses publishes. No inbound operation may answer 202 (which promises a
 * durably queued batch); the edge operations answer 503 `temporarily unavailable`. The portal's
 * push fallback may instead answer 200 with a synchronous result (contract 4.6 rule 3), never 202.
 * A second queue refuses every other publish: then each 202 must match exactly one accepted
 * publish (no 202 without a queued message).
 */

/** A Queue whose publish rejects `when(n)` (n = 1-based publish count) and otherwise records. */
function faultyQueue(when: (n: number) => boolean) {
  let n = 0
  const published: Array<{ topic: Topic; data: Buffer }> = []
  const queue: Queue = {
    async publish(topic, data) {
      n++
      if (when(n)) throw new Error('queue unavailable (injected)')
      published.push({ topic, data })
      return `m-${n}`
    },
    async subscribe() {
      return { close: async () => {} }
    },
    async subscribeDeadLetters() {
      return { close: async () => {} }
    },
    async close() {},
  }
  return { queue, published, attempts: () => n }
}

type Deps = Awaited<ReturnType<typeof createTestDeps>>

function requests(t: ManagedTenant) {
  const body = JSON.stringify({ contacts: [contactRecord(1), contactRecord(2)] })
  const edge = (extra: Record<string, string>) => ({ host: t.host, 'content-type': 'application/json', ...extra })
  return [
    { name: 'POST /v1/contacts', app: 'edge' as const, url: '/v1/contacts', headers: edge({ authorization: `Bearer ${t.key}` }), payload: body },
    { name: 'POST /v1/contacts (x-api-key)', app: 'edge' as const, url: '/v1/contacts', headers: edge({ 'x-api-key': t.key }), payload: body },
    {
      name: 'POST /v1/contacts/{sourceId}',
      app: 'edge' as const,
      url: `/v1/contacts/${t.webhookConnectionId}`,
      headers: edge({ 'x-webhook-token': t.sourceToken }),
      payload: body,
    },
    {
      name: 'POST /v1/contacts/{sourceId}?token=',
      app: 'edge' as const,
      url: `/v1/contacts/${t.webhookConnectionId}?token=${encodeURIComponent(t.sourceToken)}`,
      headers: edge({}),
      payload: body,
    },
    {
      name: 'POST /v1/contacts/partnercrm',
      app: 'edge' as const,
      url: '/v1/contacts/partnercrm',
      headers: edge({ 'x-webhook-token': t.locationToken }),
      payload: JSON.stringify({ contactId: 'p-1', locationId: t.locationId, email: 'a@example.com' }),
    },
    {
      name: 'POST /api/contacts (portal fallback)',
      app: 'portal' as const,
      url: '/api/contacts',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      payload: body,
    },
  ]
}

describe('reliability 3: queue refusing publishes', () => {
  let deps: Deps
  let edge: Injectable
  let portal: Injectable
  let tenant: ManagedTenant
  const faulty = { refuse: true }
  const q = faultyQueue(() => faulty.refuse)

  beforeAll(async () => {
    deps = await createTestDeps({ queue: q.queue })
    edge = (await buildEdge(deps)) as unknown as Injectable
    portal = (await buildPortal(deps)) as unknown as Injectable
    faulty.refuse = false
    tenant = await createTestTenant({ managementApi: portal, deps }, RELIABILITY_TENANT)
    faulty.refuse = true
  })
  afterAll(async () => {
    await edge?.close()
    await portal?.close()
    await deps?.cleanup()
  })

  it('no 202 is ever answered; the edge answers 503 temporarily unavailable, the fallback 503 or a synchronous 200', async () => {
    const rows: string[] = []
    let accepted = 0
    let total = 0
    for (let round = 0; round < 20; round++) {
      for (const r of requests(tenant)) {
        const app = r.app === 'edge' ? edge : portal
        const res = await app.inject({ method: 'POST', url: r.url, headers: r.headers, payload: r.payload })
        total++
        if (res.statusCode === 202) accepted++
        const okEdge = res.statusCode === 503 && res.json().ok === false && res.json().error === 'temporarily unavailable'
        const okFallback = r.app === 'portal' && res.statusCode === 200
        if (!(okEdge || okFallback)) rows.push(`${r.name}: ${res.statusCode} ${res.body}`)
      }
    }
    printFigure(
      'queue-failure',
      `${accepted}/${total} requests answered 202 while every publish was refused (${rows.length} answers other than 503 temporarily unavailable)`,
    )
    expect(accepted).toBe(0)
    expect(rows).toEqual([])
  })

  it('with every other publish refused, each 202 matches one queued message', async () => {
    const q2 = faultyQueue((n) => n % 2 === 0)
    const deps2 = await createTestDeps({ queue: q2.queue, env: { DATA_DIR: deps.config.dataDir } })
    const edge2 = (await buildEdge(deps2)) as unknown as Injectable
    try {
      let accepted = 0
      let unavailable = 0
      for (let i = 0; i < 60; i++) {
        const r = requests(tenant)[i % 5]!
        const res = await edge2.inject({ method: 'POST', url: r.url, headers: r.headers, payload: r.payload })
        if (res.statusCode === 202) accepted++
        else if (res.statusCode === 503) unavailable++
      }
      const batches = q2.published.filter((p) => p.topic === 'contact-batches').length
      printFigure('queue-flaky', `${accepted} answers 202 for ${batches} batches queued (${unavailable} answered 503, ${q2.attempts()} publish attempts)`)
      expect(accepted).toBe(batches)
      expect(accepted + unavailable).toBe(60)
    } finally {
      await edge2.close()
      await deps2.close()
    }
  })
})
