import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Dispatcher } from 'undici'
import { createWebhookSender } from '@lsv/shared/adapters/outbound-http/webhook-sender.ts'
import { runDeliveryJob, type AttemptOutcome } from '@lsv/shared/domain/webhooks/deliver.ts'
import { GONE_REASON } from '@lsv/shared/domain/webhooks/schedule.ts'
import { parseDeliveryJob } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { createSafeAgent } from '@lsv/shared/adapters/outbound-http/safe-agent.ts'
import { JITTER, MAX_ATTEMPTS, RETRY_ANCHORS_MS } from '@lsv/shared/domain/webhooks/schedule.ts'
import { EXCERPT_BYTES, MAX_RESPONSE_BYTES, SEND_TIMEOUT_MS } from '@lsv/shared/adapters/outbound-http/send.ts'
import { createOutboundDeps, createPendingDelivery } from './support/outbound-deps.ts'
import { endlessBody, HANG, startHostileReceiver, type Behaviour } from './support/hostile-receiver.ts'
import { printFigure } from './support/figures.ts'

/**
 * Item 11: hostile webhook receivers, through the real delivery path (runDeliveryJob: signed
 * POST via the SSRF-filtering agent, delivery log, 410 handling, retry scheduling). The task
 * scheduler only records, so each retry's scheduled time is read off the task, against a
 * ManualClock. Time bounds are checked on the attempt the log records (latency_ms), which the
 * dispatcher measures with the real clock.
 */

type Od = Awaited<ReturnType<typeof createOutboundDeps>>

describe('reliability 11: webhook receivers that misbehave', () => {
  let od: Od
  let agent: Dispatcher
  const receivers: Array<{ close(): Promise<void> }> = []
  const figures: string[] = []

  beforeAll(async () => {
    od = await createOutboundDeps({ allowLoopback: true })
    agent = createSafeAgent({ allowLoopback: true })
  })
  afterAll(async () => {
    for (const r of receivers) await r.close()
    await agent.close()
    await od.cleanup()
    printFigure('webhook-receivers', figures.join('; '))
  })

  async function receiver(b: Behaviour) {
    const r = await startHostileReceiver(b)
    receivers.push(r)
    return r
  }

  /** Creates a delivery to `url` and runs its first attempt. */
  async function firstAttempt(url: string, random = 0.5) {
    const { delivery, integration } = await createPendingDelivery(od.deps, url)
    const queued = od.tasks.enqueued.length
    const { outcome } = await runDeliveryJob(
      { ...od.deps, webhookSender: createWebhookSender(agent) },
      { v: 1, delivery_id: delivery.id, seq: 1, attempt: 1 },
      () => random,
    )
    const stored = (await od.deps.deliveries.get(delivery.id))!
    const next = od.tasks.enqueued
      .slice(queued)
      .map((t) => ({ job: parseDeliveryJob(t.payload)!, at: t.scheduleAt?.getTime() ?? null }))
      .filter((t) => t.job.delivery_id === delivery.id && t.job.seq > 1)
    return { outcome, stored, attempt: stored.attempts.at(-1)!, next, integration, delivery }
  }

  // the three receivers that hold an attempt for the whole send bound (15 s) wait together
  // (test.concurrent, each with its own expect): each attempt is timed by its own clock, and
  // three idle sockets do not delay one another; one after the other they took 45 s
  it.concurrent('a receiver that never answers: the attempt ends as a timeout within the send bound, and is retried', async ({ expect }) => {
    const r = await receiver(HANG)
    const a = await firstAttempt(r.url)
    figures.push(`hang: ${a.attempt.error} after ${a.attempt.latency_ms} ms (bound ${SEND_TIMEOUT_MS} ms)`)
    expect(a.outcome).toBe('retrying')
    expect(a.attempt.status_code).toBeNull()
    expect(a.attempt.error).toBe('timeout')
    expect(a.attempt.latency_ms).toBeLessThanOrEqual(SEND_TIMEOUT_MS + 2_000)
    expect(a.next).toHaveLength(1)
  })

  it.concurrent('a receiver that drips its answer one byte a second: the whole attempt is still bounded', async ({ expect }) => {
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.flushHeaders()
      const stop = r.every(1_000, () => {
        if (res.destroyed) stop()
        else res.write('x')
      })
    })
    const a = await firstAttempt(r.url)
    figures.push(`drip: status ${a.attempt.status_code}, error ${a.attempt.error} after ${a.attempt.latency_ms} ms`)
    expect(a.attempt.latency_ms).toBeLessThanOrEqual(SEND_TIMEOUT_MS + 2_000)
    // the status line (200) arrived, so the attempt counts as answered; only its duration is at stake
    expect(a.attempt.status_code).toBe(200)
    // the dispatcher hung up: the receiver's response was cut off rather than finished
    for (let i = 0; i < 20 && r.stats.closedByClient === 0; i++) await new Promise((res) => setTimeout(res, 100))
    expect(r.stats.closedByClient).toBe(1)
  })

  it.concurrent('a receiver that drips its status line: bounded, no acknowledgement', async ({ expect }) => {
    const r = await receiver((_req, res) => {
      const line = 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'
      let i = 0
      const stop = r.every(1_000, () => {
        if (res.socket?.destroyed || i >= line.length) return stop()
        res.socket?.write(line[i++]!)
      })
    })
    const a = await firstAttempt(r.url)
    figures.push(`drip-headers: error ${a.attempt.error} after ${a.attempt.latency_ms} ms`)
    expect(a.attempt.latency_ms).toBeLessThanOrEqual(SEND_TIMEOUT_MS + 2_000)
    expect(a.outcome).toBe('retrying')
  })

  it('a receiver that streams an endless body: at most 64 KiB is read, a 1 KiB excerpt kept, the connection dropped', async () => {
    const r = await receiver(endlessBody(Buffer.alloc(16 * 1024, 'a')))
    const a = await firstAttempt(r.url)
    // until the receiver sees the hang-up (a fixed 200 ms before), bounded as above
    for (let i = 0; i < 100 && r.stats.closedByClient === 0; i++) await new Promise((res) => setTimeout(res, 20))
    figures.push(
      `huge body: server wrote ${r.stats.bytesWritten} bytes before the dispatcher hung up, excerpt ${a.attempt.response_excerpt?.length ?? 0} bytes`,
    )
    expect(a.attempt.status_code).toBe(200)
    expect(a.attempt.response_excerpt!.length).toBeLessThanOrEqual(EXCERPT_BYTES)
    expect(r.stats.closedByClient).toBe(1)
    // socket buffers let the server write more than we read, but not without bound
    expect(r.stats.bytesWritten).toBeLessThan(MAX_RESPONSE_BYTES + 16 * 1024 * 1024)
  })

  it('a huge declared body with a 500: bounded the same way, and retried', async () => {
    const r = await receiver((_req, res, stats) => {
      res.writeHead(500, { 'content-length': String(1024 * 1024 * 1024) })
      endlessBody(Buffer.alloc(64 * 1024, 'b'))(_req, Object.assign(res, { writeHead: () => res }), stats)
    })
    const a = await firstAttempt(r.url)
    expect(a.attempt.status_code).toBe(500)
    expect(a.outcome).toBe('retrying')
    expect(a.attempt.response_excerpt!.length).toBeLessThanOrEqual(EXCERPT_BYTES)
  })

  it.each([301, 302, 303, 307, 308])('a %i is not followed and not an acknowledgement', async (status) => {
    const target = await receiver((_req, res) => res.end('ok'))
    const r = await receiver((_req, res) => {
      res.writeHead(status, { location: target.url })
      res.end()
    })
    const a = await firstAttempt(r.url)
    expect(a.attempt.status_code).toBe(status)
    expect(a.outcome).toBe('retrying')
    expect(target.stats.requests).toBe(0)
    expect(r.stats.requests).toBe(1)
  })

  it('410 disables the integration and schedules nothing', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(410)
      res.end('gone')
    })
    const a = await firstAttempt(r.url)
    const integration = await od.deps.tenants.getIntegration(a.integration.id)
    figures.push(`410: outcome ${a.outcome}, integration active=${integration?.active}`)
    expect(a.outcome).toBe('disabled')
    expect(a.stored.status).toBe('failed')
    expect(integration?.active).toBe(false)
    expect(integration?.disabled_reason).toBe(GONE_REASON)
    expect(a.next).toHaveLength(0)
  })

  it.each([
    ['delta-seconds later than the schedule', '120', 120_000],
    ['an HTTP date later than the schedule', 'date+600', 600_000],
  ])('429 with Retry-After as %s: the next attempt waits for it', async (_label, header, expectedMs) => {
    const r = await receiver((_req, res) => {
      const value = header.startsWith('date+') ? new Date(od.clock.now() + Number(header.slice(5)) * 1000).toUTCString() : header
      res.writeHead(429, { 'retry-after': value })
      res.end()
    })
    const a = await firstAttempt(r.url)
    expect(a.outcome).toBe('retrying')
    expect(a.next).toHaveLength(1)
    const delay = a.next[0]!.at! - od.clock.now()
    figures.push(`429 Retry-After ${header}: next attempt in ${delay} ms`)
    // an HTTP date has one-second resolution
    expect(delay).toBeGreaterThanOrEqual(expectedMs - 1_000)
    expect(delay).toBeLessThanOrEqual(expectedMs)
  })

  it('429 with a Retry-After shorter than the schedule keeps the schedule (never earlier)', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(429, { 'retry-after': '1' })
      res.end()
    })
    const a = await firstAttempt(r.url)
    expect(a.next[0]!.at! - od.clock.now()).toBe(RETRY_ANCHORS_MS[1])
  })

  it('a 500 receiver is retried on the schedule (within jitter) until MAX_ATTEMPTS, then failed and kept', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(500)
      res.end('boom')
    })
    const { delivery } = await createPendingDelivery(od.deps, r.url)
    const randoms = [0, 0.999, 0.5, 0.25, 0.75, 0.1, 0.9, 0.5]
    const delays: number[] = []
    let job = { v: 1 as const, delivery_id: delivery.id, seq: 1, attempt: 1 }
    let outcome: AttemptOutcome = 'retrying'
    for (let n = 1; n <= MAX_ATTEMPTS; n++) {
      const before = od.tasks.enqueued.length
      outcome = (await runDeliveryJob({ ...od.deps, webhookSender: createWebhookSender(agent) }, job, () => randoms[n - 1]!)).outcome
      const next = od.tasks.enqueued.slice(before).map((t) => ({ job: parseDeliveryJob(t.payload)!, at: t.scheduleAt!.getTime() }))
      if (n === MAX_ATTEMPTS) {
        expect(next).toHaveLength(0)
        break
      }
      expect(outcome).toBe('retrying')
      expect(next).toHaveLength(1)
      const delay = next[0]!.at - od.clock.now()
      delays.push(delay)
      const anchor = RETRY_ANCHORS_MS[n]!
      expect(delay).toBeGreaterThanOrEqual(Math.floor(anchor * (1 - JITTER)))
      expect(delay).toBeLessThanOrEqual(Math.ceil(anchor * (1 + JITTER)))
      od.clock.set(next[0]!.at)
      job = next[0]!.job as typeof job
    }
    const stored = (await od.deps.deliveries.get(delivery.id))!
    figures.push(`500: ${stored.attempts.length} attempts, delays ${delays.map((d) => Math.round(d / 1000)).join('/')} s, final ${stored.status}`)
    expect(outcome).toBe('failed')
    expect(stored.status).toBe('failed')
    expect(stored.attempts).toHaveLength(MAX_ATTEMPTS)
    expect(r.stats.requests).toBe(MAX_ATTEMPTS)
  })

  it('a task delivered twice sends once (the recorded attempt makes the copy stale)', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(500)
      res.end()
    })
    const { delivery } = await createPendingDelivery(od.deps, r.url)
    const job = { v: 1 as const, delivery_id: delivery.id, seq: 1, attempt: 1 }
    const outcomes = await Promise.all([runDeliveryJob({ ...od.deps, webhookSender: createWebhookSender(agent) }, job, () => 0.5).then((a) => a.outcome)])
    outcomes.push((await runDeliveryJob({ ...od.deps, webhookSender: createWebhookSender(agent) }, job, () => 0.5)).outcome)
    expect(outcomes).toEqual(['retrying', 'stale'])
    expect(r.stats.requests).toBe(1)
  })
})
