import { randomBytes } from 'node:crypto'
import { afterEach, expect, it } from 'vitest'
import type { Queue, QueueMessage } from '@lsv/shared/ports/queue.ts'
import { DEAD_LETTER_ATTRIBUTES, deadLetterTopicOf, type Topic } from '@lsv/shared/model/topics.ts'
import { sleep, waitFor } from './wait.ts'

/** A dead letter as the harness reads it back from `<topic>-dead-letter`. */
export interface ReadDeadLetter {
  data: Buffer
  attributes: Record<string, string>
}

/** One adapter under test on fresh, isolated storage (a temp file, or unique topic names). */
export interface QueueHarness {
  queue: Queue
  /** dead letters of `topic` received so far */
  deadLetters(topic: Topic): Promise<ReadDeadLetter[]>
  /**
   * A queue of the same adapter pointed at a service that is not there, for adapters with
   * `ping()` (those without one have nothing remote to reach and leave this out). Closed by the
   * suite.
   */
  unreachable?(): Promise<Queue>
  close(): Promise<void>
}

const TOPIC: Topic = 'contact-batches'

/** Behaviour every Queue adapter must show. */
export function queueConformance(makeHarness: () => Promise<QueueHarness>): void {
  const open: QueueHarness[] = []
  const harness = async () => {
    const h = await makeHarness()
    open.push(h)
    return h
  }
  afterEach(async () => {
    await Promise.all(open.splice(0).map((h) => h.close()))
  })

  it('ping() (where the adapter has one) resolves while the service answers and rejects when it is not there', async () => {
    const h = await harness()
    if (!h.unreachable) {
      // no way to point the adapter at a missing service: it has nothing remote, so no ping
      expect(h.queue.ping).toBeUndefined()
      return
    }
    expect(h.queue.ping).toBeTypeOf('function')
    await expect(h.queue.ping!()).resolves.toBeUndefined()
    const gone = await h.unreachable()
    try {
      await expect(gone.ping!()).rejects.toBeInstanceOf(Error)
    } finally {
      await gone.close()
    }
  })

  it('delivers a published message with its id, data, attributes and first attempt', async () => {
    const { queue } = await harness()
    const id = await queue.publish(TOPIC, Buffer.from('{"batch":1}'), { account_id: 'acc-1', kind: 'batch' })
    expect(typeof id).toBe('string')
    expect(id.length).toBeGreaterThan(0)
    const got: QueueMessage[] = []
    const sub = await queue.subscribe(TOPIC, async (m) => {
      got.push(m)
      return 'ack'
    })
    const message = await waitFor(() => got[0], 'delivery')
    await sub.close()
    expect(message.id).toBe(id)
    expect(message.data.toString()).toBe('{"batch":1}')
    expect(message.attributes).toEqual({ account_id: 'acc-1', kind: 'batch' })
    expect(message.deliveryAttempt).toBe(1)
    expect(Number.isNaN(Date.parse(message.publishedAt))).toBe(false)
  })

  it('round-trips binary data and unicode attributes byte for byte', async () => {
    const { queue } = await harness()
    const data = Buffer.concat([Buffer.from([0, 255, 0, 1]), randomBytes(4096), Buffer.from([0])])
    const attributes = { name: 'Zoë – 東京 ✓', empty: '' }
    await queue.publish(TOPIC, data, attributes)
    const got: QueueMessage[] = []
    const sub = await queue.subscribe(TOPIC, async (m) => {
      got.push(m)
      return 'ack'
    })
    const message = await waitFor(() => got[0], 'delivery')
    await sub.close()
    expect(Buffer.compare(message.data, data)).toBe(0)
    expect(message.attributes).toEqual(attributes)
  })

  it('does not deliver an acked message again', async () => {
    const { queue } = await harness()
    await queue.publish(TOPIC, Buffer.from('first'))
    const first: string[] = []
    const sub1 = await queue.subscribe(TOPIC, async (m) => {
      first.push(m.data.toString())
      return 'ack'
    })
    await waitFor(() => first.includes('first'), 'first delivery')
    await sub1.close()

    await queue.publish(TOPIC, Buffer.from('second'))
    const later: string[] = []
    const sub2 = await queue.subscribe(TOPIC, async (m) => {
      later.push(m.data.toString())
      return 'ack'
    })
    await waitFor(() => later.includes('second'), 'second delivery')
    await sleep(300) // room for a wrongly kept 'first' to show up
    await sub2.close()
    expect(later).toEqual(['second'])
    expect(first).toEqual(['first'])
  })

  it('drops a message published to a topic without a subscription: a subscription created later gets only what follows', async () => {
    // contact-changes has no subscription in either adapter's topology (BigQuery reads it in Google Cloud only)
    const { queue } = await harness()
    const unsubscribed: Topic = 'contact-changes'
    await queue.publish(unsubscribed, Buffer.from('before any subscription'))
    const got: string[] = []
    const sub = await queue.subscribe(unsubscribed, async (m) => {
      got.push(m.data.toString())
      return 'ack'
    })
    await queue.publish(unsubscribed, Buffer.from('after subscribing'))
    await waitFor(() => got.includes('after subscribing'), 'delivery of the later message')
    await sleep(500) // room for a wrongly kept first message to show up
    await sub.close()
    expect(got).toEqual(['after subscribing'])
  })

  it('keeps messages of a subscribed topic published before any consumer attached', async () => {
    const { queue } = await harness()
    const ids = [await queue.publish('visit-events', Buffer.from('one')), await queue.publish('visit-events', Buffer.from('two'))]
    const got: string[] = []
    const sub = await queue.subscribe('visit-events', async (m) => {
      got.push(m.id)
      return 'ack'
    })
    await waitFor(() => got.length === 2, 'both deliveries')
    await sub.close()
    expect(got.sort()).toEqual(ids.sort())
  })

  it('redelivers a nacked message with the delivery attempt incremented', async () => {
    const { queue } = await harness()
    const id = await queue.publish(TOPIC, Buffer.from('retry me'))
    const seen: QueueMessage[] = []
    const sub = await queue.subscribe(TOPIC, async (m) => {
      seen.push(m)
      return seen.length === 1 ? 'nack' : 'ack'
    })
    await waitFor(() => seen.length >= 2, 'redelivery')
    await sub.close()
    expect(seen.map((m) => m.id)).toEqual([id, id])
    expect(seen.map((m) => m.deliveryAttempt)).toEqual([1, 2])
    expect(seen[1]!.data.toString()).toBe('retry me')
  })

  it('moves a message to the dead-letter topic after maxDeliveryAttempts and stops delivering it', async () => {
    const h = await harness()
    await h.queue.publish(TOPIC, Buffer.from('poison'), { account_id: 'acc-dl' })
    const attempts: number[] = []
    const sub = await h.queue.subscribe(
      TOPIC,
      async (m) => {
        attempts.push(m.deliveryAttempt)
        return 'nack'
      },
      { maxDeliveryAttempts: 3 },
    )
    const dead = await waitFor(async () => {
      const letters = await h.deadLetters(TOPIC)
      return letters.length > 0 ? letters : undefined
    }, 'dead letter')
    await sleep(300) // a fourth delivery would show up here
    await sub.close()
    expect(attempts).toEqual([1, 2, 3])
    expect(dead).toHaveLength(1)
    expect(dead[0]!.data.toString()).toBe('poison')
    expect(dead[0]!.attributes.account_id).toBe('acc-dl')
  })

  it('gives every dead letter to the dead-letter alerts consumer too (source attributes added), and the inspection subscription keeps its copy', async () => {
    const h = await harness()
    const alerts: QueueMessage[] = []
    const alertSub = await h.queue.subscribeDeadLetters(TOPIC, async (m) => {
      alerts.push(m)
      return 'ack'
    })
    await h.queue.publish(TOPIC, Buffer.from('poison-2'), { account_id: 'acc-dla' })
    const sub = await h.queue.subscribe(TOPIC, async () => 'nack', { maxDeliveryAttempts: 2 })
    // a consumer parking a message itself (the upsert worker): published straight to the dead-letter topic
    await h.queue.publish(deadLetterTopicOf(TOPIC) as Topic, Buffer.from('parked'), { account_id: 'acc-dla', [DEAD_LETTER_ATTRIBUTES.reason]: 'unreadable' })
    // mutation: the embedded queue's copy to the alerts rows removed (or the adapter's alerts
    // subscription not created) -> nothing arrives here
    const got = await waitFor(() => (alerts.length >= 2 ? alerts : undefined), 'dead letters on the alerts subscription')
    await sub.close()
    await alertSub.close()
    const forwarded = got.find((m) => m.data.toString() === 'poison-2')!
    expect(forwarded.attributes.account_id).toBe('acc-dla')
    // what Pub/Sub's dead-letter policy adds (mutation: json_set / the attributes dropped -> undefined)
    expect(forwarded.attributes[DEAD_LETTER_ATTRIBUTES.sourceDeliveryCount]).toBe('2')
    expect(forwarded.attributes[DEAD_LETTER_ATTRIBUTES.sourceSubscription]).toMatch(/contact-batches/)
    expect(got.find((m) => m.data.toString() === 'parked')!.attributes[DEAD_LETTER_ATTRIBUTES.reason]).toBe('unreadable')
    // the inspection subscription still has both (mutation: alerts read the inspection rows -> 0 left)
    const kept = await waitFor(async () => {
      const letters = await h.deadLetters(TOPIC)
      return letters.length >= 2 ? letters : undefined
    }, 'dead letters kept for inspection')
    expect(kept.map((l) => l.data.toString()).sort()).toEqual(['parked', 'poison-2'])
  })

  it('delivers every message at least once when the handler throws on first sight', async () => {
    const { queue } = await harness()
    const payloads = ['a', 'b', 'c', 'd', 'e']
    for (const p of payloads) await queue.publish(TOPIC, Buffer.from(p))
    const thrownFor = new Set<string>()
    const acked = new Set<string>()
    const sub = await queue.subscribe(
      TOPIC,
      async (m) => {
        const p = m.data.toString()
        if (!thrownFor.has(p)) {
          thrownFor.add(p)
          throw new Error('handler crashed')
        }
        acked.add(p)
        return 'ack'
      },
      { maxDeliveryAttempts: 10 },
    )
    await waitFor(() => acked.size === payloads.length, 'all messages acked')
    await sub.close()
    expect([...acked].sort()).toEqual(payloads)
  })

  it('keeps at most maxInFlight handlers running', async () => {
    const { queue } = await harness()
    for (let i = 0; i < 6; i++) await queue.publish(TOPIC, Buffer.from(`m${i}`))
    let running = 0
    let peak = 0
    const done = new Set<string>()
    const sub = await queue.subscribe(
      TOPIC,
      async (m) => {
        running++
        peak = Math.max(peak, running)
        await sleep(50)
        running--
        done.add(m.data.toString())
        return 'ack'
      },
      { maxInFlight: 2 },
    )
    await waitFor(() => done.size === 6, 'all handled')
    await sub.close()
    expect(peak).toBeGreaterThanOrEqual(1)
    expect(peak).toBeLessThanOrEqual(2)
  })

  it('close() waits for the handlers in flight', async () => {
    const { queue } = await harness()
    await queue.publish(TOPIC, Buffer.from('slow'))
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    let started = false
    let finished = false
    const sub = await queue.subscribe(TOPIC, async () => {
      started = true
      await gate
      finished = true
      return 'ack'
    })
    await waitFor(() => started, 'handler start')
    let closed = false
    const closing = sub.close().then(() => (closed = true))
    await sleep(50)
    expect(closed).toBe(false)
    release()
    await closing
    expect(finished).toBe(true)
  })
}
