import type { Logger } from 'pino'
import type { Topic } from '../../model/topics.ts'
import type { MessageHandler } from '../../ports/queue.ts'
import { inMessageSpan } from '../../logging/trace-propagation.ts'
import { type Lease, messageOf, type QueueLeases } from './queue-leases.ts'
import { onWake } from './queue-wakeups.ts'

interface ConsumerOptions {
  /** the file's path: wake-ups of its topic come without waiting for a poll */
  path: string
  logger: Logger
  leases: QueueLeases
  leaseMs: number
  pollIntervalMs: number
  maxInFlight: number
  maxAttempts: number
  /** each claim's outcome, so the adapter's health sees a subscriber that cannot claim */
  onClaim(failed: boolean): void
}

/**
 * Runs `handler` on one delivery: in a span continuing the publisher's trace, with the lease
 * renewed every third of it while the handler works (the heartbeat: a long batch is not
 * redelivered mid-way, while a consumer that died loses it within one lease), then settled.
 */
async function deliver(topic: Topic, lease: Lease, handler: MessageHandler, options: ConsumerOptions): Promise<void> {
  const { logger, leases } = options
  const { row } = lease
  const renewal = setInterval(
    () => {
      leases.renew(lease).catch((err: unknown) => logger.warn({ err, topic }, 'lease renewal failed'))
    },
    Math.max(10, Math.floor(options.leaseMs / 3)),
  )
  let result: 'ack' | 'nack'
  try {
    // in a span continuing the publisher's trace (its `traceparent` attribute)
    const message = messageOf(lease)
    result = (await inMessageSpan(topic, message, () => handler(message))) === 'ack' ? 'ack' : 'nack'
  } catch (err) {
    logger.error({ err, topic, messageId: row.id, attempt: row.delivery_count }, 'message handler failed')
    result = 'nack'
  } finally {
    clearInterval(renewal)
  }
  try {
    await leases.settle(topic, lease, result, options.maxAttempts)
  } catch (err) {
    // the lease expires and the message comes back: at-least-once still holds
    logger.error({ err, topic, messageId: row.id }, 'settling message failed')
  }
}

/**
 * One consumer of the subscription `topic` names: claims as many messages as it has free slots
 * (maxInFlight) when woken, every pollIntervalMs, and whenever a delivery ends. `close` stops
 * claiming and resolves once the deliveries under way are settled.
 */
export function startConsumer(topic: Topic, handler: MessageHandler, options: ConsumerOptions): { close(): Promise<void> } {
  const { logger, leases, maxInFlight } = options
  const inFlight = new Set<Promise<void>>()
  let stopped = false
  let timer: NodeJS.Timeout | null = null
  let polling = false
  let pollAgain = false

  const poll = () => {
    if (stopped) return
    if (polling) {
      pollAgain = true
      return
    }
    polling = true
    try {
      do {
        pollAgain = false
        const free = maxInFlight - inFlight.size
        if (free <= 0) break
        let claimed: Lease[]
        try {
          claimed = leases.claim(topic, free)
          options.onClaim(false)
        } catch (err) {
          options.onClaim(true)
          logger.warn({ err, topic }, 'claiming messages failed')
          break
        }
        for (const lease of claimed) {
          const p: Promise<void> = deliver(topic, lease, handler, options).finally(() => {
            inFlight.delete(p)
            // a slot is free (and a nacked message may be due): look again soon
            queueMicrotask(poll)
          })
          inFlight.add(p)
        }
        if (claimed.length === free) pollAgain = true
      } while (pollAgain && !stopped)
    } finally {
      polling = false
    }
  }

  const schedule = () => {
    if (stopped) return
    timer = setTimeout(() => {
      poll()
      schedule()
    }, options.pollIntervalMs)
  }
  const stopWaking = onWake(options.path, topic, () => poll())
  poll()
  schedule()

  return {
    async close() {
      if (stopped) return
      stopped = true
      if (timer) clearTimeout(timer)
      stopWaking()
      while (inFlight.size > 0) await Promise.allSettled([...inFlight])
    },
  }
}
