/**
 * start:cloud (the deployed shape on this machine) with `var.operator_events_url` set: a poison
 * batch published on contact-batches is pushed to the upsert-worker, which parks it on
 * contact-batches-dead-letter; the dead-letter topic's alerts subscription pushes it (through the
 * OIDC relay) to the webhook-dispatcher's /pubsub/contact-batches-dead-letter, which sends the
 * operator one Standard-Webhooks-signed `batch.dead_lettered` through Cloud Tasks, signed with
 * the Secret Manager secret `operator-events-secret` (here start:cloud's secret store).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { publishMessage } from '../../scripts/lib/cloud/pubsub-setup.ts'
import { emulators, randomSuffix } from '../helpers/embedded.ts'
import { startReceiver } from '../outbound/harness.ts'
import { cleanUp, pubsubNames, relayLog, sleep, startCloud, stopCloud, waitForBanner, waitForRelayed } from './support.ts'

afterAll(cleanUp, 60_000)

const skip = !emulators.firestore || !emulators.pubsub

describe.skipIf(skip)('start:cloud: a dead-lettered batch reaches the operator', () => {
  it('a poison batch ends as one signed batch.dead_lettered at OPERATOR_EVENTS_URL', async () => {
    const operator = await startReceiver(() => ({ status: 200 }))
    try {
      const run = await startCloud({ env: { OPERATOR_EVENTS_URL: operator.url } })
      await waitForBanner(run)
      const account = `acc_${randomSuffix(6)}`
      await publishMessage(emulators.pubsub!, run.project, 'contact-batches', {
        data: Buffer.from('not a batch at all').toString('base64'),
        attributes: { account_id: account },
      })
      // mutation (tried): the dispatcher's dead-letter routes not registered -> 404 here, retried; the alerts
      // push subscription dropped from infra/pubsub.tf -> no push of it ever
      const pushed = await waitForRelayed(run, 'contact-batches-dead-letter-alerts')
      expect(pushed.status, JSON.stringify(relayLog(run))).toBe(204)
      const deadline = Date.now() + 60_000
      while (operator.requests.length === 0 && Date.now() < deadline) await sleep(200)
      expect(operator.requests, run.output()).toHaveLength(1)

      const store = JSON.parse(readFileSync(join(run.dataDir, 'secrets.json'), 'utf8')) as Record<string, Array<{ data: string }>>
      const secret = store['operator-events-secret']!.at(-1)!.data
      const r = operator.requests[0]!
      // signed with the deployed secret (mutation: another secret -> verify throws)
      const event = new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { type: string; data: Record<string, unknown> }
      expect(event.type).toBe('batch.dead_lettered')
      expect(event.data).toMatchObject({ subscription: 'contact-batches', account_id: account, delivery_attempts: 1 })
      expect(String(event.data.reason)).toMatch(/\S/)
      // one dead letter, one push of the alerts subscription acked, one POST
      expect(relayLog(run).filter((l) => l.subscription === 'contact-batches-dead-letter-alerts')).toHaveLength(1)
      expect(await pubsubNames(run.project, 'subscriptions')).not.toEqual([])
      const stopped = await stopCloud(run)
      expect(stopped.code, run.output()).toBe(0)
      expect(operator.requests).toHaveLength(1)
      // the stopped run's topics and subscriptions are gone from the shared emulator (support.ts)
      expect([...(await pubsubNames(run.project, 'subscriptions')), ...(await pubsubNames(run.project, 'topics'))]).toEqual([])
    } finally {
      await operator.close()
    }
  }, 240_000)
})
