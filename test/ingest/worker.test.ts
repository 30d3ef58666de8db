import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import type { ContactStore } from '@lsv/shared/ports/contact-store.ts'
import type { QueueMessage } from '@lsv/shared/ports/queue.ts'
import type { EmbeddedQueue } from '@lsv/shared/adapters/embedded/queue.ts'
import { mergeContact } from '@lsv/shared/domain/contacts/merge.ts'
import { toChangeRow } from '@lsv/shared/domain/contacts/change-row.ts'
import { CHANGE_ROW_VERSION } from '@lsv/shared/contract/messages.ts'
import { batchAttributes } from '@lsv/shared/domain/ingest/batch-message.ts'
import { handleBatchMessage, RECORD_ATTEMPTS } from '../../services/upsert-worker/src/handle-batch.ts'
import { startUpsertWorkerBackground } from '../../services/upsert-worker/src/background.ts'
import { buildApp as buildWorker } from '../../services/upsert-worker/src/app.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { createHarness, body, type Harness, record } from './support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

describe('upsert worker: handleBatchMessage', () => {
  let h: Harness
  let t: StoredTenant
  const clock = new ManualClock(Date.UTC(2026, 8, 4, 12))

  /** pushes through the edge and returns the queued message */
  async function pushed(contacts: unknown[], url = '/v1/contacts', headers?: Record<string, string>): Promise<QueueMessage> {
    const before = h.q.batches().length
    const res = await h.edge.inject({ method: 'POST', url, headers: headers ?? t.keyHeaders(), payload: body(contacts) })
    expect(res.statusCode).toBe(202)
    return h.q.batches()[before]!
  }

  beforeAll(async () => {
    h = await createHarness({ clock })
    t = await createTestTenant(h.deps, {
      webhook: {
        mappings: [
          { from: 'Mail', to: 'email' },
          { from: 'Vorname', to: 'first_name' },
          { from: 'Kunden-Nr', to: 'external_id' },
          { from: 'Score', to: 'custom_fields.score' },
          { from: 'Tags', to: 'custom_fields.tags' },
        ],
      },
      customFields: [
        { key: 'score', type: 'number' },
        { key: 'tags', type: 'multi_select' },
      ],
    })
  })
  afterAll(async () => {
    await t?.cleanup()
    await h?.close()
  })

  it('a push followed by the worker: the contact is found by (source, external_id), with the mapped values', async () => {
    const message = await pushed([record(1, { company: 'Acme', title: 'CTO', phone: 'dropped', nested: { x: 1 }, first_name: 'Ann', last_name: null })])
    expect(await handleBatchMessage(h.deps, message)).toBe('ack')
    const c = await h.deps.contacts.getByAnchor(t.account.id, 'crm', 'ext-1')
    expect(c).toMatchObject({
      source: 'crm',
      external_id: 'ext-1',
      business_email: 'person1@example.com',
      identity: { first_name: 'Ann', full_name: 'Ann', title: 'CTO' },
      company: { name: 'Acme' },
      name_source: 'manual',
      resolved_by: null,
      first_seen_at: message.attributes.received_at,
      last_seen_at: message.attributes.received_at,
    })
    expect(c!.identity.last_name).toBeUndefined()
    expect(JSON.stringify(c)).not.toContain('dropped')
  })

  it('the per-source webhook maps through its own field mappings, custom fields typed', async () => {
    const message = await pushed(
      [{ kunden_nr: 'K-9', MAIL: 'K9@Example.com', vorname: 'Kai', score: 7, tags: ['a', 'b'], email: 'unmapped@example.com' }],
      `/v1/contacts/${t.webhook.id}`,
      { host: t.host, 'x-webhook-token': t.sourceToken, 'content-type': 'application/json' },
    )
    expect(await handleBatchMessage(h.deps, message)).toBe('ack')
    const c = await h.deps.contacts.getByAnchor(t.account.id, 'hooks', 'K-9')
    expect(c).toMatchObject({ business_email: 'k9@example.com', identity: { first_name: 'Kai' } })
    expect(c!.custom_fields).toEqual({
      score: { value: '7', source: 'inbound_mapping', enriched_at: null },
      tags: { value: ['a', 'b'], source: 'inbound_mapping', enriched_at: null },
    })
  })

  it('the partner CRM: external_id from the contact id, source partnercrm', async () => {
    const before = h.q.batches().length
    const res = await h.edge.inject({
      method: 'POST',
      url: '/v1/contacts/partnercrm',
      headers: { host: t.host, 'x-webhook-token': t.locationToken, 'content-type': 'application/json' },
      payload: JSON.stringify({ contact_id: 'pc-1', location_id: t.locationId, firstName: 'Pia', companyName: 'Globex', email: 'PIA@globex.io' }),
    })
    expect(res.statusCode).toBe(202)
    expect(await handleBatchMessage(h.deps, h.q.batches()[before]!)).toBe('ack')
    expect(await h.deps.contacts.getByAnchor(t.account.id, 'partnercrm', 'pc-1')).toMatchObject({
      identity: { first_name: 'Pia', full_name: 'Pia' },
      company: { name: 'Globex' },
      business_email: 'pia@globex.io',
    })
  })

  it('a duplicated or redelivered message changes nothing: same rows, same values', async () => {
    const message = await pushed([record(10), record(11, { title: 'A' }), record(10, { title: 'second occurrence' })])
    expect(await handleBatchMessage(h.deps, message)).toBe('ack')
    const first = await Promise.all(['ext-10', 'ext-11'].map((id) => h.deps.contacts.getByAnchor(t.account.id, 'crm', id)))
    expect(first[0]!.identity.title).toBe('second occurrence')
    clock.advance(60_000)
    expect(await handleBatchMessage(h.deps, { ...message, deliveryAttempt: 2 })).toBe('ack')
    expect(await handleBatchMessage(h.deps, { ...message, id: 'duplicate-delivery' })).toBe('ack')
    const again = await Promise.all(['ext-10', 'ext-11'].map((id) => h.deps.contacts.getByAnchor(t.account.id, 'crm', id)))
    expect(again).toEqual(first)
  })

  it('an older batch delivered after a newer one does not overwrite it (event time = received_at)', async () => {
    const older = await pushed([record(20, { title: 'old' })])
    clock.advance(1000)
    const newer = await pushed([record(20, { title: 'new' })])
    expect(await handleBatchMessage(h.deps, newer)).toBe('ack')
    expect(await handleBatchMessage(h.deps, older)).toBe('ack')
    expect((await h.deps.contacts.getByAnchor(t.account.id, 'crm', 'ext-20'))!.identity.title).toBe('new')
  })

  it('precedence ladder: an inbound push (manual) never overwrites names set by a form, but overwrites provider and enrichment names', async () => {
    const at = new Date(clock.now()).toISOString()
    const seed = (externalId: string, writer: 'form' | 'provider' | 'enrichment') =>
      h.deps.contacts.upsertBatch(
        t.account.id,
        [
          {
            source: 'crm',
            external_id: externalId,
            writer,
            at,
            origin: `seed-${externalId}`,
            resolved_by: 'vendor-x',
            patch: { identity: { first_name: 'Seeded', last_name: 'Name', full_name: 'Seeded Name' } },
          },
        ],
        mergeContact,
      )
    await seed('ext-30', 'form')
    await seed('ext-31', 'provider')
    await seed('ext-32', 'enrichment')
    clock.advance(1000)
    const message = await pushed([30, 31, 32].map((i) => record(i, { first_name: 'Pushed', last_name: 'Person', title: 'Pushed title' })))
    expect(await handleBatchMessage(h.deps, message)).toBe('ack')
    const [form, provider, enrichment] = await Promise.all([30, 31, 32].map((i) => h.deps.contacts.getByAnchor(t.account.id, 'crm', `ext-${i}`)))
    expect(form).toMatchObject({ identity: { first_name: 'Seeded', last_name: 'Name', full_name: 'Seeded Name', title: 'Pushed title' }, name_source: 'form' })
    for (const c of [provider, enrichment])
      expect(c).toMatchObject({ identity: { first_name: 'Pushed', last_name: 'Person', full_name: 'Pushed Person' }, name_source: 'manual' })
    // resolved_by is insert-only: the push carries none and never clears it
    expect(form!.resolved_by).toBe('vendor-x')
  })

  it('full_name joins the names the contact holds: a later push of the last name alone keeps the first (contract 2.1)', async () => {
    // an outside probe (2026-11-30) found full_name "Murray" next to first_name "Grace"
    expect(await handleBatchMessage(h.deps, await pushed([{ external_id: 'fn-1', first_name: 'Grace', last_name: 'Hopper' }]))).toBe('ack')
    clock.advance(1000)
    expect(await handleBatchMessage(h.deps, await pushed([{ external_id: 'fn-1', last_name: 'Murray' }]))).toBe('ack')
    const c = await h.deps.contacts.getByAnchor(t.account.id, 'crm', 'fn-1')
    expect(c?.identity).toMatchObject({ first_name: 'Grace', last_name: 'Murray', full_name: 'Grace Murray' })
  })

  it('publishes one change row per changed contact to contact-changes, none for an unchanged redelivery of attempt 1', async () => {
    const message = await pushed([record(40), record(41)])
    const before = h.q.changes().length
    expect(await handleBatchMessage(h.deps, message)).toBe('ack')
    const rows = h.q.changes().slice(before)
    expect(rows).toHaveLength(2)
    const stored = await h.deps.contacts.getByAnchor(t.account.id, 'crm', 'ext-40')
    expect(rows.map((r) => JSON.parse(r.data.toString()))).toContainEqual(toChangeRow(stored!, message.attributes.received_at!))
    expect(rows[0]!.attributes).toMatchObject({ v: CHANGE_ROW_VERSION, account_id: t.account.id })
    // a duplicate first delivery changes nothing and publishes nothing
    expect(await handleBatchMessage(h.deps, { ...message, id: 'dup' })).toBe('ack')
    expect(h.q.changes()).toHaveLength(before + 2)
    // a redelivery (attempt > 1) republishes the rows of contacts this batch wrote: an earlier attempt may have died before publishing
    expect(await handleBatchMessage(h.deps, { ...message, deliveryAttempt: 2 })).toBe('ack')
    expect(h.q.changes()).toHaveLength(before + 4)
  })

  it('records without an anchor are never stored; the rest of the batch lands', async () => {
    const message = await pushed([{ email: 'anchorless@example.com', first_name: 'No' }, record(50)])
    expect(await handleBatchMessage(h.deps, message)).toBe('ack')
    expect(await h.deps.contacts.getByAnchor(t.account.id, 'crm', 'ext-50')).not.toBeNull()
    expect(await h.deps.contacts.findByBusinessEmail(t.account.id, 'anchorless@example.com')).toBeNull()
  })

  it('a message that can never be processed is dead-lettered as it came and acked', async () => {
    const good = await pushed([record(60)])
    const before = h.q.deadLetters().length
    for (const bad of [
      { ...good, attributes: { ...good.attributes, v: '2' } },
      { ...good, attributes: { ...good.attributes, received_at: 'yesterday' } },
      { ...good, attributes: { ...good.attributes, account_id: '' } },
      { ...good, data: Buffer.from('not json') },
      { ...good, data: Buffer.from('{"contacts":[]}') },
    ]) {
      expect(await handleBatchMessage(h.deps, bad)).toBe('ack')
    }
    const dead = h.q.deadLetters().slice(before)
    expect(dead).toHaveLength(5)
    expect(dead[3]!.data.toString()).toBe('not json')
    expect(dead[0]!.attributes['x-dead-letter-reason']).toContain('version')
  })

  it('a record too large to ever store is dead-lettered at once (replayable: same batch id and index); the rest lands', async () => {
    const big = await createTestTenant(h.deps, {
      api: {
        mappings: [
          { from: 'external_id', to: 'external_id' },
          { from: 'notes', to: 'custom_fields.notes' },
        ],
      },
      customFields: [{ key: 'notes', type: 'large_text' }],
    })
    try {
      const before = h.q.deadLetters().length
      const message = await pushed(
        [
          { external_id: 'small', notes: 'fine' },
          { external_id: 'huge', notes: 'n'.repeat(1_000_000) },
        ],
        '/v1/contacts',
        big.keyHeaders(),
      )
      expect(await handleBatchMessage(h.deps, message)).toBe('ack')
      expect(await h.deps.contacts.getByAnchor(big.account.id, 'crm', 'small')).not.toBeNull()
      expect(await h.deps.contacts.getByAnchor(big.account.id, 'crm', 'huge')).toBeNull()
      const dead = h.q.deadLetters().slice(before)
      expect(dead).toHaveLength(1)
      expect(dead[0]!.attributes).toMatchObject({ batch_id: message.attributes.batch_id, indexes: '1', v: '1', shape: 'contacts' })
      expect(JSON.parse(dead[0]!.data.toString()).contacts[0].external_id).toBe('huge')
    } finally {
      await big.cleanup()
    }
  })

  it('records the store fails to write: redelivered until attempt RECORD_ATTEMPTS, then dead-lettered; a store failing every write is only ever nacked', async () => {
    const failing = (predicate: (externalId: string) => boolean): ContactStore => ({
      ...h.deps.contacts,
      async upsertBatch(accountId, inputs, merge, options) {
        const keep = inputs.filter((i) => !predicate(i.external_id))
        const results = await h.deps.contacts.upsertBatch(accountId, keep, merge, options)
        let k = 0
        return inputs.map((i) => (predicate(i.external_id) ? { contactId: 'x', result: 'failed' as const, error: 'injected' } : results[k++]!))
      },
    })
    const message = await pushed([record(70), record(71)])
    const partly = { ...h.deps, contacts: failing((id) => id === 'ext-71') }
    const before = h.q.deadLetters().length
    for (let attempt = 1; attempt < RECORD_ATTEMPTS; attempt++) expect(await handleBatchMessage(partly, { ...message, deliveryAttempt: attempt })).toBe('nack')
    expect(await handleBatchMessage(partly, { ...message, deliveryAttempt: RECORD_ATTEMPTS })).toBe('ack')
    expect(await h.deps.contacts.getByAnchor(t.account.id, 'crm', 'ext-70')).not.toBeNull()
    const dead = h.q.deadLetters().slice(before)
    expect(dead).toHaveLength(1)
    expect(dead[0]!.attributes.indexes).toBe('1')

    const down = { ...h.deps, contacts: failing(() => true) }
    const other = await pushed([record(72)])
    for (const attempt of [1, RECORD_ATTEMPTS, 10]) expect(await handleBatchMessage(down, { ...other, deliveryAttempt: attempt })).toBe('nack')
    const throwing = {
      ...h.deps,
      contacts: {
        ...h.deps.contacts,
        upsertBatch: async () => {
          throw new Error('store down')
        },
      },
    }
    await expect(handleBatchMessage(throwing, other)).rejects.toThrow('store down')
  })

  it('a dead-lettered record replayed to the main topic lands under its original origin', async () => {
    const message = await pushed([record(80), record(81)])
    const replay = {
      ...message,
      id: 'replayed',
      data: Buffer.from(JSON.stringify({ contacts: [record(81)] })),
      attributes: { ...message.attributes, indexes: '1' },
    }
    expect(await handleBatchMessage(h.deps, replay)).toBe('ack')
    const c = await h.deps.contacts.getByAnchor(t.account.id, 'crm', 'ext-81')
    expect(Object.values(c!.versions).every((v) => v.endsWith(`${message.attributes.batch_id}:1`))).toBe(true)
    // the original delivery afterwards changes nothing for that record
    expect(await handleBatchMessage(h.deps, message)).toBe('ack')
    expect(await h.deps.contacts.getByAnchor(t.account.id, 'crm', 'ext-81')).toEqual(c)
  })

  it('batchAttributes round-trips the partner location', () => {
    expect(
      batchAttributes({ shape: 'partnercrm', accountId: 'a', connectionId: 'c', source: 'partnercrm', receivedAt: 'r', batchId: 'b', locationId: 'l' }),
    ).toMatchObject({ location_id: 'l' })
  })
})

describe('upsert worker: subscription and push endpoint', () => {
  it('the background subscription (embedded queue) upserts what the edge queued', async () => {
    const deps = await createTestDeps()
    const t = await createTestTenant(deps)
    const edge = await buildEdge(deps)
    const worker = await startUpsertWorkerBackground(deps)
    try {
      const res = await edge.inject({ method: 'POST', url: '/v1/contacts', headers: t.keyHeaders(), payload: body([record(1), record(2)]) })
      expect(res.statusCode).toBe(202)
      let found = null
      for (let i = 0; i < 200 && !found; i++) {
        found = await deps.contacts.getByAnchor(t.account.id, 'crm', 'ext-2')
        if (!found) await new Promise((r) => setTimeout(r, 25))
      }
      expect(found).toMatchObject({ external_id: 'ext-2', business_email: 'person2@example.com' })
      expect(await (deps.queue as EmbeddedQueue).readDeadLetters('contact-batches')).toEqual([])
    } finally {
      await worker.close()
      await edge.close()
      await t.cleanup()
      await deps.cleanup()
    }
  })

  it('POST /pubsub/contact-batches (Pub/Sub push envelope) upserts and answers 204; /healthz still answers', async () => {
    const deps = await createTestDeps()
    const t = await createTestTenant(deps)
    const app = await buildWorker(deps)
    try {
      const attributes = batchAttributes({
        shape: 'contacts',
        accountId: t.account.id,
        connectionId: t.api.id,
        source: 'crm',
        receivedAt: new Date().toISOString(),
        batchId: 'b-push',
      })
      const res = await app.inject({
        method: 'POST',
        url: '/pubsub/contact-batches',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({
          message: { data: Buffer.from(body([record(5)])).toString('base64'), attributes, messageId: '1', publishTime: new Date().toISOString() },
          subscription: 'projects/p/subscriptions/contact-batches-push',
        }),
      })
      expect(res.statusCode).toBe(204)
      expect(await deps.contacts.getByAnchor(t.account.id, 'crm', 'ext-5')).not.toBeNull()
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
    } finally {
      await app.close()
      await t.cleanup()
      await deps.cleanup()
    }
  })
})
