/**
 * A crash in the deployed shape: `npm run start:cloud`, a 10,000-record batch pushed on the edge,
 * and the upsert-worker's process group SIGKILLed while it is storing the batch (some records in
 * Firestore, not all). start:cloud starts a new instance as Cloud Run would; the push relay
 * delivers the batch again after the subscription's backoff with `deliveryAttempt` 2 or more, so
 * the worker also republishes the change rows of the records the killed attempt had stored. At
 * the end every record is in Firestore with its pushed values and every contact has a change row
 * on contact-changes-bigquery (BigQuery's subscription, a pull subscription here).
 *
 * What fails it: start:cloud stopping everything when a service exits (no new instance: the run
 * ends, records lost); a relay that leaves redelivery to the emulator (the batch is never pushed
 * again: records lost); a relay that sends no `deliveryAttempt` (the redelivery counts as a first
 * delivery, the records stored before the kill get no change row: rows missing).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Firestore } from '@google-cloud/firestore'
import { contactIdFor } from '@lsv/shared/model/ids.ts'
import { pullMessages } from '../../scripts/lib/cloud/pubsub-setup.ts'
import { emulators } from '../helpers/embedded.ts'
import { cleanUp, pushContacts, relayLog, servicePids, sleep, startCloud, stopCloud, waitForBanner } from './support.ts'

afterAll(cleanUp, 60_000)

const RECORDS = 10_000
const skip = !emulators.firestore || !emulators.pubsub

describe.skipIf(skip)('start:cloud: the upsert-worker killed during a 10,000-record batch', () => {
  it('gets a new instance; 0 records lost in Firestore, 0 change rows missing on contact-changes-bigquery', async () => {
    const run = await startCloud()
    const c = await waitForBanner(run)
    const fs = new Firestore({ projectId: run.project })
    try {
      const contacts = fs.collection('accounts').doc(c.account_id).collection('contacts')
      const stored = async () => (await contacts.count().get()).data().count

      const records = Array.from({ length: RECORDS }, (_, i) => ({ external_id: `k-${i}`, email: `k${i}@example.com`, first_name: `First${i}x` }))
      const pushed = await pushContacts(run, c, JSON.stringify({ contacts: records }))
      expect(pushed.status, pushed.body).toBe(202)

      // kill while the batch is being stored: some records written (enough that their change rows
      // matter), not all
      let atKill = 0
      const deadline = Date.now() + 120_000
      while (Date.now() < deadline) {
        atKill = await stored()
        if (atKill >= 100) break
        await sleep(20)
      }
      const killedAt = Date.now()
      const [worker] = servicePids(run, 'upsert-worker')
      expect(worker, 'the upsert-worker process').toBeDefined()
      process.kill(-worker!, 'SIGKILL')
      expect(atKill, 'the kill came mid-batch (some records stored, not all)').toBeGreaterThan(0)
      expect(atKill).toBeLessThan(RECORDS)

      // a new instance, said on the terminal; the run goes on
      const restarted = Date.now() + 120_000
      while (!/upsert-worker: new instance ready/.test(run.output()) && Date.now() < restarted) {
        expect(run.child.exitCode, run.output()).toBeNull()
        await sleep(200)
      }
      expect(run.output()).toMatch(/upsert-worker exited \(signal SIGKILL\) after it was ready: starting a new instance, as Cloud Run would/)
      expect(run.output()).toMatch(/upsert-worker: new instance ready/)
      const readyAfter = Date.now() - killedAt
      expect(servicePids(run, 'upsert-worker').filter((p) => p !== worker)).toHaveLength(1)

      // the batch is delivered again (after the 10 s minimum_backoff) and acked; the relay's log
      // is read first: a count of the stored contacts is a query over thousands of documents in
      // the shared Firestore emulator, asked only once the relay has seen the ack
      const acked = Date.now() + 240_000
      while (Date.now() < acked) {
        if (relayLog(run).some((l) => l.subscription === 'contact-batches-push' && l.outcome === 'acked') && (await stored()) >= RECORDS) break
        await sleep(250)
      }
      const attempts = relayLog(run).filter((l) => l.subscription === 'contact-batches-push')
      expect(attempts.at(-1), JSON.stringify(attempts)).toMatchObject({ outcome: 'acked' })
      expect(attempts.at(-1)!.attempt, JSON.stringify(attempts)).toBeGreaterThanOrEqual(2)
      expect(attempts[0], JSON.stringify(attempts)).toMatchObject({ attempt: 1, outcome: 'retry', status: 502 })

      // every record, once, with its pushed values
      const docs = (await contacts.get()).docs.map((d) => ({ id: d.id, data: d.data() }))
      const expectedIds = new Map(records.map((r, i) => [contactIdFor(c.account_id, c.api_source, r.external_id), i]))
      const storedIds = new Set(docs.map((d) => d.id))
      const lost = [...expectedIds.keys()].filter((id) => !storedIds.has(id))
      const wrong = docs.filter((d) => {
        const i = expectedIds.get(d.id)
        return i === undefined || !JSON.stringify(d.data).includes(`"First${i}x"`)
      })

      // every contact's change row, read from BigQuery's subscription (duplicates allowed: at least once)
      const rowsFor = new Set<string>()
      const drained = Date.now() + 120_000
      while (rowsFor.size < RECORDS && Date.now() < drained) {
        const batch = await pullMessages(emulators.pubsub!, run.project, 'contact-changes-bigquery', 1000)
        for (const m of batch) rowsFor.add((JSON.parse(m.data) as { contact_id: string }).contact_id)
        if (batch.length === 0) await sleep(500)
      }
      const missingRows = [...expectedIds.keys()].filter((id) => !rowsFor.has(id))
      console.log(
        `CLOUD-KILL upsert-worker SIGKILLed with ${atKill}/${RECORDS} stored; new instance ready after ${Math.round(readyAfter / 1000)} s; ` +
          `delivery attempts ${attempts.map((a) => `${a.attempt}:${a.status}@+${Math.round((Date.parse(a.time) - killedAt) / 1000)}s`).join(', ')}; ` +
          `lost ${lost.length}, wrong ${wrong.length}, change rows missing ${missingRows.length}`,
      )
      expect(lost.length, 'records lost in Firestore').toBe(0)
      expect(wrong.length, 'records with other values').toBe(0)
      expect(docs.length).toBe(RECORDS)
      expect(missingRows.length, 'change rows missing on contact-changes-bigquery').toBe(0)
    } finally {
      await fs.terminate()
    }

    const stopped = await stopCloud(run)
    expect(stopped.code, run.output()).toBe(0)
    expect(stopped.leftovers, 'processes left running after SIGTERM').toEqual([])
  }, 600_000)
})
