import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { generateSigningSecret } from '@lsv/shared/domain/webhooks/signing.ts'
import { createDeadLetterHandler } from '@lsv/shared/domain/operations/dead-letter.ts'
import { OperationalEvent } from '@lsv/shared/contract/operational-event.ts'
import { messageCheck } from '@lsv/shared/contract/message-check.ts'
import type { Background } from '@lsv/shared/platform/background.ts'
import type { QueueMessage } from '@lsv/shared/ports/queue.ts'
import { handleBatchMessage } from '../../services/upsert-worker/src/handle-batch.ts'
import { background as dispatcherBackground } from '../../services/webhook-dispatcher/src/background.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { emulators } from '../helpers/embedded.ts'
import { waitFor } from '../conformance/suites/wait.ts'
import { drainDueTasks, startReceiver, type ReceivedRequest } from './harness.ts'

const checkEvent = messageCheck(OperationalEvent)
type DeadLettered = Extract<OperationalEvent, { type: 'batch.dead_lettered' }>

/**
 * `batch.dead_lettered` as the operator's receiver meets it (issue 23): a batch message ends on
 * `contact-batches-dead-letter` (parked by the upsert worker, or dead-lettered by the queue after
 * its delivery attempts); the webhook-dispatcher's background consumes the dead letters' alerts
 * subscription (as `npm start` runs it) and the operator gets one Standard-Webhooks-signed POST,
 * verified with the operator secret. On the embedded queue and, when the emulator runs, on the
 * Pub/Sub emulator (the pull adapter; start:cloud's push path: test/cloud/start-cloud.test.ts).
 */
const stacks = emulators.pubsub ? (['embedded', 'emulators'] as const) : (['embedded'] as const)

describe.each(stacks)('batch.dead_lettered on the %s queue', (backend) => {
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let operator: Awaited<ReturnType<typeof startReceiver>>
  let started: Background[] = []
  const secret = generateSigningSecret()
  const account = `acc_${randomBytes(6).toString('hex')}`

  beforeAll(async () => {
    operator = await startReceiver(() => ({ status: 200 }))
    deps = await createTestDeps({
      backend,
      env: {
        OPERATOR_EVENTS_URL: operator.url,
        OPERATOR_EVENTS_SECRET: secret,
        // own topics and subscriptions on the shared emulator
        ...(backend === 'emulators' ? { PUBSUB_NAME_PREFIX: `t${randomBytes(4).toString('hex')}-` } : {}),
      },
    })
    // what the local stack's dispatcher runs: it pulls, so it consumes the dead letters too
    started = await dispatcherBackground(deps, { pull: ['visit-events'], taskRunner: false, thread: false })
  })
  afterAll(async () => {
    for (const b of started) await b.close()
    await operator?.close()
    await deps?.cleanup()
  })

  const verified = (r: ReceivedRequest): DeadLettered => {
    // the signature over the bytes received, with the operator's secret (mutation: another secret -> throws)
    const payload = new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as unknown
    const checked = checkEvent(payload)
    if (!checked.ok) throw new Error(checked.reason)
    expect(checked.value.type).toBe('batch.dead_lettered')
    expect(r.headers['webhook-id']).toBe(checked.value.id)
    return checked.value as DeadLettered
  }
  const posts = async (n: number) =>
    waitFor(async () => {
      await drainDueTasks(deps)
      return operator.requests.length >= n ? operator.requests.slice() : undefined
    }, `${n} operator POSTs`)

  it('an unreadable message on contact-batches, parked by the worker: one signed event; the same dead letter seen again: no second POST', async () => {
    operator.requests.length = 0
    const worker = await deps.queue.subscribe('contact-batches', (m) => handleBatchMessage(deps, m), { maxInFlight: 1 })
    let id: string
    try {
      id = await deps.queue.publish('contact-batches', Buffer.from('not a batch at all'), { account_id: account })
      // mutation: the dispatcher's subscribeDeadLetters consumers removed from background.ts -> times out
      await posts(1)
    } finally {
      await worker.close()
    }
    const event = verified(operator.requests[0]!)
    expect(event.data).toMatchObject({
      // parked by its consumer: no Pub/Sub source subscription, the source topic (dead-letter.ts)
      subscription: 'contact-batches',
      // the original message, as the worker's attributes name it (mutation: x-original-message-id not set -> the dead letter's id)
      message_id: id,
      account_id: account,
      delivery_attempts: 1,
    })
    expect(event.data.reason).toMatch(/\S/)

    // the same dead letter again (a redelivery of the alerts subscription, another instance)
    const again: QueueMessage = {
      id: 'another-dead-letter-copy',
      data: Buffer.from('not a batch at all'),
      attributes: { account_id: account, 'x-original-message-id': id, 'x-delivery-attempts': '1', 'x-dead-letter-reason': 'again' },
      deliveryAttempt: 2,
      publishedAt: new Date().toISOString(),
    }
    expect(await createDeadLetterHandler(deps, 'contact-batches')(again)).toBe('ack')
    await drainDueTasks(deps)
    // mutation: the event keyed on occurred_at or the data (reason differs) instead of the message -> 2
    expect(operator.requests).toHaveLength(1)
  })

  it('a message the queue dead-letters after its delivery attempts: one signed event with the source subscription and attempts', async () => {
    operator.requests.length = 0
    const nacking = await deps.queue.subscribe('contact-batches', async () => 'nack', { maxDeliveryAttempts: 2, maxInFlight: 1 })
    let id: string
    try {
      id = await deps.queue.publish('contact-batches', Buffer.from('{}'), { account_id: account })
      await posts(1)
    } finally {
      await nacking.close()
    }
    const event = verified(operator.requests[0]!)
    expect(event.data).toMatchObject({ message_id: id, account_id: account, delivery_attempts: 2, reason: null })
    // the forwarding's CloudPubSubDeadLetterSourceSubscription (mutation: attribute not read -> 'contact-batches')
    expect(event.data.subscription).toMatch(/contact-batches-sub$/)
  })
})
