import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import pino from 'pino'
import { PubSub } from '@google-cloud/pubsub'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChangeRow } from '@lsv/shared/contract/messages.ts'
import type { VisitEvent } from '@lsv/shared/contract/visit-event.ts'
import type { ContactRecord } from '@lsv/shared/model/records.ts'
import type { ContactStore } from '@lsv/shared/ports/contact-store.ts'
import type { Queue } from '@lsv/shared/ports/queue.ts'
import { createPubSubQueue } from '@lsv/shared/adapters/google/pubsub-queue.ts'
import { toChangeRow } from '@lsv/shared/domain/contacts/change-row.ts'
import { mergeContact } from '@lsv/shared/domain/contacts/merge.ts'
import { handleVisitEvent } from '@lsv/shared/domain/visits/handle.ts'
import { contactIdFor } from '@lsv/shared/model/ids.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { emulators, randomSuffix } from '../helpers/embedded.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { recordingQueue } from '../ingest/support/harness.ts'

/**
 * The change feed is a property of the contact write (docs/contact-object.md, "Change rows"):
 * every writer of the contact store crosses the seam of domain/contacts/write-seam.ts, whose
 * listener publishes one row per changed contact, the contact as stored. Walked two ways: the
 * source (every call of the port's write method in product code goes through `deps.contacts`,
 * the seam) and end to end (a visit that creates a person, a visit that merges into a pushed
 * contact, an enrichment), on the embedded adapters and on the Firestore / Pub/Sub emulators.
 */

const ROOT = join(import.meta.dirname, '..', '..')
const PRODUCT_DIRS = ['shared/src', 'services', 'scripts']

function productFiles(): Array<{ path: string; text: string }> {
  const out: Array<{ path: string; text: string }> = []
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules') continue
      const p = join(dir, name)
      if (statSync(p).isDirectory()) walk(p)
      else if (p.endsWith('.ts')) out.push({ path: relative(ROOT, p), text: readFileSync(p, 'utf8') })
    }
  }
  for (const d of PRODUCT_DIRS) walk(join(ROOT, d))
  return out
}

describe('every writer of the contact store crosses the write seam', () => {
  it('the port has one write that changes contacts, upsertBatch; every product call of it goes through deps.contacts, the seam', () => {
    // the port's methods, as an adapter implements them: a new write method must be listed here (and in the seam)
    const port = readFileSync(join(ROOT, 'shared/src/ports/contact-store.ts'), 'utf8')
    const body = /export interface ContactStore \{([\s\S]*?)\n\}/.exec(port)![1]!
    const methods = [...body.matchAll(/^ {2}([a-zA-Z]+)\(/gm)].map((m) => m[1]).sort()
    expect(methods).toEqual(['close', 'deleteAccountData', 'findByBusinessEmail', 'findByNetworkUrl', 'get', 'getByAnchor', 'list', 'upsertBatch'])
    const files = productFiles()
    const writers = files.filter((f) => /\.upsertBatch\(/.test(f.text) && !f.path.includes('/adapters/')).map((f) => f.path)
    // each of these has an end-to-end test below (push: test/ingest/worker.test.ts)
    expect(writers.sort()).toEqual([
      'shared/src/domain/contacts/write-seam.ts',
      'shared/src/domain/ingest/upsert.ts',
      'shared/src/domain/visits/resolve-person.ts',
    ])
    for (const path of writers.filter((p) => !p.endsWith('write-seam.ts'))) {
      const calls = [...files.find((f) => f.path === path)!.text.matchAll(/([\w.]+)\.upsertBatch\(/g)].map((m) => m[1])
      expect(calls, path).toEqual(calls.map(() => 'deps.contacts'))
    }
    // deps.contacts is the seam: the composition root is the only place that builds a contact store adapter (its stores part,
    // platform/deps-stores.ts), and wraps it (platform/deps.ts)
    const builders = files.filter((f) => /create(Embedded|Firestore)ContactStore\(/.test(f.text) && !f.path.includes('/adapters/')).map((f) => f.path)
    expect(builders).toEqual(['shared/src/platform/deps-stores.ts'])
    expect(files.find((f) => f.path === 'shared/src/platform/deps.ts')!.text).toMatch(/contacts: withContactWrites\(contacts,/)
    // no product code deletes contacts wholesale (tests and account deletion only): no delete rows to publish
    expect(files.filter((f) => /contacts\.deleteAccountData\(/.test(f.text)).map((f) => f.path)).toEqual([])
  })

  it('the seam wraps every method of the port, reads passing through unchanged', async () => {
    const calls: string[] = []
    const inner = new Proxy({} as ContactStore, {
      get: (_t, name: string) => async () => {
        calls.push(name)
        return name === 'upsertBatch' ? [] : null
      },
    })
    const { withContactWrites } = await import('@lsv/shared/domain/contacts/write-seam.ts')
    const seam = withContactWrites(inner, () => [])
    for (const name of ['get', 'getByAnchor', 'findByNetworkUrl', 'findByBusinessEmail', 'list', 'deleteAccountData', 'upsertBatch', 'close'] as const) {
      await (seam[name] as (...a: unknown[]) => Promise<unknown>)('a', 'b', () => null, {})
    }
    expect(calls).toEqual(['get', 'getByAnchor', 'findByNetworkUrl', 'findByBusinessEmail', 'list', 'deleteAccountData', 'upsertBatch', 'close'])
  })
})

/** A backend the writers run on, and the change rows it has published so far. */
interface Feed {
  deps: Awaited<ReturnType<typeof createTestDeps>>
  rows(): ChangeRow[]
  close(): Promise<void>
}

const embeddedFeed = async (): Promise<Feed> => {
  const q = recordingQueue()
  const deps = await createTestDeps({ queue: q.queue })
  return { deps, rows: () => q.changes().map((m) => JSON.parse(m.data.toString()) as ChangeRow), close: () => deps.cleanup() }
}

const emulatorFeed = async (): Promise<Feed> => {
  // topics and the reading subscription are created under a random prefix, so runs sharing an emulator never meet
  const queue = createPubSubQueue(new PubSub({ projectId: emulators.project }), {
    logger: pino({ level: 'silent' }),
    createMissing: true,
    namePrefix: `feed-${randomSuffix(4)}-`,
  })
  const rows: ChangeRow[] = []
  const reader = await queue.subscribe('contact-changes', async (m) => {
    rows.push(JSON.parse(m.data.toString()) as ChangeRow)
    return 'ack'
  })
  const deps = await createTestDeps({ backend: 'emulators', queue })
  return {
    deps,
    rows: () => rows,
    async close() {
      await reader.close()
      await deps.cleanup()
    },
  }
}

/** The rows published for one contact, once `n` have arrived (Pub/Sub delivers a moment later). */
async function rowsOf(feed: Feed, contactId: string, n: number): Promise<ChangeRow[]> {
  for (let i = 0; i < 200; i++) {
    const found = feed.rows().filter((r) => r.contact_id === contactId)
    if (found.length >= n) return found
    await new Promise((r) => setTimeout(r, 25))
  }
  return feed.rows().filter((r) => r.contact_id === contactId)
}

/** What the row of this contact as stored, changed at `at`, must be (the test runs in no trace). */
const rowOf = (stored: ContactRecord | null, at: string) => toChangeRow(stored!, at, 'upsert', null)

function changeFeedWalk(name: string, open: () => Promise<Feed>): void {
  describe(name, () => {
    let feed: Feed
    let tenant: StoredTenant
    const published = '2026-09-04T12:00:00.000Z'
    beforeAll(async () => {
      feed = await open()
      tenant = await createTestTenant(feed.deps, {
        ...ACCOUNT_ONLY,
        integration: { url: 'http://127.0.0.1:9/hook', tiers: { contact_handles: true, sensitive_traits: false } },
      })
    })
    afterAll(async () => {
      await tenant?.cleanup()
      await feed?.close()
    })
    const visit = (resolution: NonNullable<VisitEvent['resolution']>, seenAt: string): VisitEvent => ({
      id: `visit_${randomSuffix()}`,
      account_id: tenant.account.id,
      tier: 'person',
      visit: { captured_url: 'https://shop.example/pricing', seen_at: seenAt },
      resolution,
    })
    const settled = async (contactId: string, n: number) => {
      const rows = await rowsOf(feed, contactId, n)
      // nothing more arrives for it (a second row would be a second publish)
      await new Promise((r) => setTimeout(r, 100))
      expect(feed.rows().filter((r) => r.contact_id === contactId)).toHaveLength(rows.length)
      return rows
    }

    it('a visit that resolves a new person publishes exactly one row, the person as stored', async () => {
      const seenAt = '2026-09-04T11:59:00.000Z'
      const outcome = await handleVisitEvent(
        feed.deps,
        visit({ identity: { first_name: 'Ada', network_url: `https://network.example/in/${randomSuffix()}` }, resolved_by: 'vendor-x' }, seenAt),
        published,
      )
      expect(outcome.result).toBe('delivered')
      if (outcome.result !== 'delivered') return
      const rows = await settled(outcome.contactId, 1)
      // mutation: without the seam (no change feed on the visit path) there is no row
      expect(rows).toEqual([rowOf(await feed.deps.contacts.get(tenant.account.id, outcome.contactId), seenAt)])
      expect(rows[0]).toMatchObject({ source: 'resolution', first_name: 'Ada', resolved_by: 'vendor-x' })
    })

    it("a visit whose person matches a pushed contact merges into it and publishes exactly one row with both writers' values", async () => {
      const email = `grace.${randomSuffix()}@acme.example`
      const id = contactIdFor(tenant.account.id, 'crm', 'ext-merge')
      await feed.deps.contacts.upsertBatch(
        tenant.account.id,
        [
          {
            source: 'crm',
            external_id: 'ext-merge',
            writer: 'manual',
            at: '2026-09-04T10:00:00.000Z',
            origin: 'seed:0',
            patch: { business_email: email, identity: { first_name: 'Grace' } },
          },
        ],
        mergeContact,
      )
      await settled(id, 1)
      const seenAt = '2026-09-04T11:58:00.000Z'
      const outcome = await handleVisitEvent(
        feed.deps,
        visit({ identity: { title: 'CTO' }, handles: { business_email: email }, company: { name: 'Acme' }, resolved_by: 'vendor-y' }, seenAt),
        published,
      )
      expect(outcome).toMatchObject({ result: 'delivered', contactId: id })
      const rows = await settled(id, 2)
      expect(rows).toHaveLength(2)
      const stored = await feed.deps.contacts.get(tenant.account.id, id)
      expect(rows[1]).toEqual(rowOf(stored, seenAt))
      expect(rows[1]).toMatchObject({ first_name: 'Grace', title: 'CTO', company_name: 'Acme', business_email: email })
    })

    it('an enrichment publishes exactly one row; a write that changes nothing publishes none', async () => {
      const id = contactIdFor(tenant.account.id, 'crm', 'ext-enrich')
      const input = {
        source: 'crm',
        external_id: 'ext-enrich',
        writer: 'manual' as const,
        at: '2026-09-04T10:00:00.000Z',
        origin: 'seed:1',
        patch: { identity: { first_name: 'Lin' } },
      }
      await feed.deps.contacts.upsertBatch(tenant.account.id, [input], mergeContact)
      await settled(id, 1)
      const at = '2026-09-04T10:30:00.000Z'
      const enrichment = {
        ...input,
        writer: 'enrichment' as const,
        at,
        origin: 'enrichment-job:7',
        patch: { company: { name: 'Lin Corp', domain: 'lin.example' } },
      }
      const [outcome] = await feed.deps.contacts.upsertBatch(tenant.account.id, [enrichment], mergeContact)
      expect(outcome).toMatchObject({ result: 'updated', written: { by: 'enrichment', change: 'updated' } })
      const rows = await settled(id, 2)
      expect(rows[1]).toEqual(rowOf(await feed.deps.contacts.get(tenant.account.id, id), at))
      expect(rows[1]).toMatchObject({ company_name: 'Lin Corp', company_domain: 'lin.example' })
      // the same write again changes nothing: no row
      await feed.deps.contacts.upsertBatch(tenant.account.id, [enrichment], mergeContact)
      expect(await settled(id, 2)).toHaveLength(2)
    })
  })
}

changeFeedWalk('the change feed of every writer (embedded adapters)', embeddedFeed)
describe.skipIf(!emulators.firestore || !emulators.pubsub)('on the emulators', () => {
  changeFeedWalk('the change feed of every writer (Firestore and Pub/Sub emulators)', emulatorFeed)
})

describe('a change row that cannot be published', () => {
  it('fails the visit, and the redelivered visit publishes the row of the person it already wrote', async () => {
    const q = recordingQueue()
    const failing: Queue = {
      ...q.queue,
      publish: async (topic, data, attributes) =>
        topic === 'contact-changes' ? Promise.reject(new Error('down (test)')) : q.queue.publish(topic, data, attributes),
    }
    const deps = await createTestDeps({ queue: q.queue })
    const tenant = await createTestTenant(deps, {
      ...ACCOUNT_ONLY,
      integration: { url: 'http://127.0.0.1:9/hook', tiers: { contact_handles: true, sensitive_traits: false } },
    })
    try {
      const event: VisitEvent = {
        id: `visit_${randomSuffix()}`,
        account_id: tenant.account.id,
        tier: 'person',
        visit: { captured_url: 'https://shop.example/', seen_at: '2026-09-04T11:00:00.000Z' },
        resolution: { identity: { first_name: 'Bo', network_url: `https://network.example/in/${randomSuffix()}` }, resolved_by: 'vendor-x' },
      }
      deps.queue = failing
      await expect(handleVisitEvent(deps, event, '2026-09-04T12:00:00.000Z')).rejects.toThrow(/reaction to a contact write failed/)
      expect(q.changes()).toHaveLength(0)
      deps.queue = q.queue
      const again = await handleVisitEvent(deps, event, '2026-09-04T12:00:00.000Z')
      expect(again.result).toBe('delivered')
      if (again.result !== 'delivered') return
      // mutation: without recheckApplied on the visit path the redelivery finds nothing changed and publishes nothing
      expect(q.changes().map((m) => (JSON.parse(m.data.toString()) as ChangeRow).contact_id)).toEqual([again.contactId])
    } finally {
      await tenant.cleanup()
      await deps.cleanup()
    }
  })
})
