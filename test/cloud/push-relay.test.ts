/**
 * The push relay plays Pub/Sub push delivery on top of the gcloud emulator, which ignores retry
 * and dead-letter policies: a real emulator pushes a real published message to the relay, the
 * relay delivers it to a loopback target that fails on purpose, and the attempts the target saw
 * (with the wrapped body's `deliveryAttempt`), the waits between them and the dead-letter topic's
 * pull subscription are checked against what the subscription declares.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer, type Server } from 'node:http'
import { join } from 'node:path'
import { createIam } from '../../scripts/lib/cloud/iam.ts'
import { startOidcIssuer, type OidcIssuer } from '../../scripts/lib/cloud/oidc-issuer.ts'
import { backoffMs, startPushRelay, type PushRelay, type RelayLogLine, type RelayRoute } from '../../scripts/lib/cloud/push-relay.ts'
import { createTopicsAndSubscriptions, publishMessage, pullMessages } from '../../scripts/lib/cloud/pubsub-setup.ts'
import type { SubscriptionShape } from '../../scripts/lib/cloud/deployed-shape.ts'
import { emulators, randomSuffix } from '../helpers/embedded.ts'
import { freePort } from '../../scripts/lib/free-port.ts'
import { existsSync, readFileSync } from 'node:fs'
import { cleanUp, sleep, tempDir } from './support.ts'

interface Hit {
  at: number
  body: Record<string, unknown>
  authorization: string | undefined
}

/** A target answering each request with the next status of `statuses` (the last one repeats); 'hang' never answers. */
async function target(statuses: Array<number | 'hang'>): Promise<{ url: string; hits: Hit[]; close(): Promise<void> }> {
  const hits: Hit[] = []
  const server: Server = createServer((req, res) => {
    let body = ''
    req.on('data', (d: Buffer) => (body += d.toString('utf8')))
    req.on('end', () => {
      hits.push({ at: Date.now(), body: JSON.parse(body) as Record<string, unknown>, authorization: req.headers.authorization })
      const status = statuses[Math.min(hits.length - 1, statuses.length - 1)]!
      if (status === 'hang') return
      res.writeHead(status)
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/pubsub/test`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

async function until<T>(what: string, probe: () => T | null | undefined | Promise<T | null | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const v = await probe()
    if (v !== null && v !== undefined) return v
    await sleep(50)
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`)
}

const skip = !emulators.pubsub
const RETRY = { minimumBackoffMs: 200, maximumBackoffMs: 500 }
const EMAIL = 'pubsub-push@demo-relay.iam.gserviceaccount.com'

describe.skipIf(skip)('push relay: Pub/Sub push delivery on the emulator (retry policy, deliveryAttempt, dead letters)', () => {
  const host = emulators.pubsub!
  const project = `demo-relay-${randomSuffix(4)}`
  const logFile = join(tempDir('lsv-relay-'), 'push-relay.log')
  let issuer: OidcIssuer
  const relays: PushRelay[] = []
  const targets: Array<{ close(): Promise<void> }> = []

  beforeAll(async () => {
    issuer = await startOidcIssuer()
  })
  afterAll(async () => {
    for (const r of relays) await r.close()
    await issuer.close()
    for (const t of targets) await t.close()
    await cleanUp()
  })

  /** One subscription of its own (random name) pushing through a relay started for it. */
  async function subscription(
    targetUrl: string,
    options: { deadLetter?: boolean; maxDeliveryAttempts?: number; ackDeadlineSeconds?: number; retry?: RelayRoute['retry'] } = {},
  ): Promise<{ topic: string; name: string; deadLetterSub: string; relay: PushRelay }> {
    const id = randomSuffix(4)
    const topic = `t-${id}`
    const name = `${topic}-push`
    const deadLetterTopic = `${topic}-dead-letter`
    const deadLetterSub = `${deadLetterTopic}-sub`
    const route: RelayRoute = {
      subscription: name,
      target: targetUrl,
      service: null,
      oidc: { serviceAccountEmail: EMAIL, audience: 'http://127.0.0.1' },
      ackDeadlineSeconds: options.ackDeadlineSeconds ?? 10,
      wrapped: true,
      retry: options.retry === undefined ? RETRY : options.retry,
      deadLetter: options.deadLetter === false ? null : { topic: deadLetterTopic, maxDeliveryAttempts: options.maxDeliveryAttempts ?? 5 },
    }
    const relay = await startPushRelay([route], issuer, createIam([], {}), logFile, { emulatorHost: host, project })
    relays.push(relay)
    const shapes: SubscriptionShape[] = [
      {
        name,
        topic,
        ackDeadlineSeconds: 10,
        retryPolicy: { minimumBackoff: '0.2s', maximumBackoff: '0.5s' },
        deadLetterPolicy: route.deadLetter ? { deadLetterTopic, maxDeliveryAttempts: route.deadLetter.maxDeliveryAttempts } : null,
        messageRetentionDuration: null,
        push: { endpoint: targetUrl, oidc: route.oidc, noWrapper: null },
        replacesBigQuery: false,
      },
      {
        name: deadLetterSub,
        topic: deadLetterTopic,
        ackDeadlineSeconds: 10,
        retryPolicy: null,
        deadLetterPolicy: null,
        messageRetentionDuration: null,
        push: null,
        replacesBigQuery: false,
      },
    ]
    await createTopicsAndSubscriptions({
      emulatorHost: host,
      project,
      topics: [topic, deadLetterTopic],
      subscriptions: shapes,
      pushEndpointFor: (n) => relay.endpointFor(n),
    })
    return { topic, name, deadLetterSub, relay }
  }

  const publish = (topic: string, text: string) =>
    publishMessage(host, project, topic, { data: Buffer.from(text).toString('base64'), attributes: { kind: 'relay-test' } })
  const lines = (subscription: string) =>
    (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as RelayLogLine)
      .filter((l) => l.subscription === subscription)

  it('a target that fails 3 times (500, 203, 503) gets 4 attempts, deliveryAttempt 1..4, each after the backoff; then acked', async () => {
    // 203 is a 2xx but not one of Pub/Sub's success codes (mutation: `status < 300` acks it → 2 attempts)
    const t = await target([500, 203, 503, 204])
    targets.push(t)
    const { topic, name, deadLetterSub } = await subscription(t.url)
    const messageId = await publish(topic, 'fails three times')
    await until('acked', () => lines(name).find((l) => l.outcome === 'acked'))
    // mutation: no deliveryAttempt in the body → undefined; a counter not increased → [1,1,1,1]
    expect(t.hits.map((h) => h.body.deliveryAttempt)).toEqual([1, 2, 3, 4])
    expect(t.hits.map((h) => (h.body.message as { messageId: string }).messageId)).toEqual([messageId, messageId, messageId, messageId])
    expect(Buffer.from((t.hits[0]!.body.message as { data: string }).data, 'base64').toString()).toBe('fails three times')
    // each attempt carries a fresh ID token of the declared identity
    for (const h of t.hits) expect(h.authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/)
    // minimum_backoff doubled per attempt, capped at maximum_backoff: 200, 400, 500 ms
    expect([1, 2, 3].map((a) => backoffMs(RETRY, a))).toEqual([200, 400, 500])
    const log = lines(name)
    expect(log.map((l) => [l.attempt, l.status, l.outcome, l.retryInMs ?? null])).toEqual([
      [1, 500, 'retry', 200],
      [2, 203, 'retry', 400],
      [3, 503, 'retry', 500],
      [4, 204, 'acked', null],
    ])
    // the waits were kept (a lower bound only: timers never fire early; mutation: no sleep → gaps of a few ms)
    for (let i = 1; i < t.hits.length; i++) expect(t.hits[i]!.at - t.hits[i - 1]!.at).toBeGreaterThanOrEqual(backoffMs(RETRY, i) - 5)
    expect(await pullMessages(host, project, deadLetterSub)).toEqual([])
  }, 60_000)

  it('a target that always fails is dead-lettered after max_delivery_attempts (5): on the dead-letter topic with its source named, never delivered again', async () => {
    const t = await target([500])
    targets.push(t)
    const { topic, name, deadLetterSub, relay: r } = await subscription(t.url, { maxDeliveryAttempts: 5 })
    await publish(topic, 'always fails')
    const dead = await until('dead-lettered', () => lines(name).find((l) => l.outcome === 'dead-lettered'))
    expect(dead).toMatchObject({ attempt: 5, status: 500, deadLetterTopic: `${topic}-dead-letter` })
    const parked = await until('on the dead-letter subscription', async () => {
      const m = await pullMessages(host, project, deadLetterSub)
      return m.length > 0 ? m : null
    })
    expect(parked).toHaveLength(1)
    expect(parked[0]!.data).toBe('always fails')
    expect(parked[0]!.attributes).toMatchObject({
      kind: 'relay-test',
      CloudPubSubDeadLetterSourceDeliveryCount: '5',
      CloudPubSubDeadLetterSourceSubscription: name,
      CloudPubSubDeadLetterSourceSubscriptionProject: project,
    })
    // mutation: dead-letter check off by one (> max) → a 6th attempt; no dead-lettering → attempts go on
    await sleep(backoffMs(RETRY, 5) * 3)
    expect(t.hits.map((h) => h.body.deliveryAttempt)).toEqual([1, 2, 3, 4, 5])
    expect(r.held()).toBe(0)
  }, 60_000)

  it('an endpoint that is down, then one past the ack deadline, are nacks too; without a dead-letter policy there is no deliveryAttempt and no limit', async () => {
    // nothing listens on this port for the first attempts; then a target that hangs once, then answers
    const port = await freePort()
    const url = `http://127.0.0.1:${port}/pubsub/test`
    const { topic, name } = await subscription(url, { deadLetter: false, ackDeadlineSeconds: 1 })
    await publish(topic, 'down, slow, then fine')
    await until('two refused connections', () => (lines(name).filter((l) => l.status === 502).length >= 2 ? true : null))
    const hits: Hit[] = []
    const answers: Array<number | 'hang'> = ['hang', 200]
    const server = createServer((req, res) => {
      let body = ''
      req.on('data', (d: Buffer) => (body += d.toString('utf8')))
      req.on('end', () => {
        hits.push({ at: Date.now(), body: JSON.parse(body) as Record<string, unknown>, authorization: req.headers.authorization })
        const a = answers[Math.min(hits.length - 1, answers.length - 1)]!
        if (a === 'hang') return
        res.writeHead(a)
        res.end()
      })
    })
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
    targets.push({
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        }),
    })
    const acked = await until('acked', () => lines(name).find((l) => l.outcome === 'acked'))
    const log = lines(name)
    expect(log.filter((l) => l.status === 502 && /ECONNREFUSED|fetch failed/.test(l.error ?? '')).length).toBeGreaterThanOrEqual(2)
    // mutation: no ack-deadline timeout → the hanging attempt never ends and nothing is acked
    expect(log.find((l) => /ack deadline \(1 s\)/.test(l.error ?? ''))).toBeDefined()
    expect(acked.status).toBe(200)
    expect(hits.length).toBe(2)
    // Pub/Sub sends deliveryAttempt only with a dead-letter policy
    for (const h of hits) expect(h.body).not.toHaveProperty('deliveryAttempt')
  }, 60_000)
})
