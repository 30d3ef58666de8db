/**
 * Topics and subscriptions on the Pub/Sub emulator, as Terraform declares them: push
 * subscriptions keep their wrapper setting (`noWrapper` when Terraform sets `no_wrapper`), OIDC
 * identity, ack deadline, retry and dead-letter policies, and push to the relay, which adds the
 * token and forwards to the declared service endpoint. The BigQuery subscription becomes a pull
 * subscription of the same name on the same topic, which a test or a developer can read.
 * Uses the emulator's REST API (the same one gcloud and the client libraries speak).
 *
 * The emulator keeps the retry and dead-letter policies it is given but does not act on them
 * (it never sends `deliveryAttempt`, never dead-letters, and rarely pushes a nacked message
 * again), so the push relay plays them (push-relay.ts); they are still declared here so that the
 * subscription reads back as Terraform declares it.
 */
import type { SubscriptionShape } from './deployed-shape.ts'

export interface PubSubSetup {
  emulatorHost: string
  project: string
  topics: string[]
  subscriptions: SubscriptionShape[]
  /** the relay endpoint of a push subscription */
  pushEndpointFor(subscription: string): string
}

async function call(host: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`http://${host}/v1/${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  })
  const text = await res.text()
  let json: Record<string, unknown> = {}
  try {
    json = text ? (JSON.parse(text) as Record<string, unknown>) : {}
  } catch {
    json = { text }
  }
  return { status: res.status, json }
}

/** The subscription resource the emulator gets for one declared subscription. */
function subscriptionBody(project: string, s: SubscriptionShape, pushEndpoint: string | null): Record<string, unknown> {
  const body: Record<string, unknown> = {
    topic: `projects/${project}/topics/${s.topic}`,
    ackDeadlineSeconds: s.ackDeadlineSeconds,
  }
  if (s.retryPolicy) body.retryPolicy = s.retryPolicy
  if (s.deadLetterPolicy) {
    body.deadLetterPolicy = {
      deadLetterTopic: `projects/${project}/topics/${s.deadLetterPolicy.deadLetterTopic}`,
      maxDeliveryAttempts: s.deadLetterPolicy.maxDeliveryAttempts,
    }
  }
  if (s.messageRetentionDuration) body.messageRetentionDuration = s.messageRetentionDuration
  if (s.push) {
    const pushConfig: Record<string, unknown> = { pushEndpoint }
    if (s.push.oidc) pushConfig.oidcToken = s.push.oidc
    if (s.push.noWrapper) pushConfig.noWrapper = s.push.noWrapper
    body.pushConfig = pushConfig
  }
  return body
}

/**
 * Creates every topic and subscription (idempotent: an existing subscription from an earlier run
 * on the same emulator is recreated, since its relay endpoint and settings may differ).
 */
export async function createTopicsAndSubscriptions(setup: PubSubSetup): Promise<void> {
  const { emulatorHost: host, project } = setup
  for (const topic of setup.topics) {
    const res = await call(host, 'PUT', `projects/${project}/topics/${topic}`, {})
    if (res.status !== 200 && res.status !== 409)
      throw new Error(`Pub/Sub emulator: creating topic ${topic} answered ${res.status} ${JSON.stringify(res.json)}`)
  }
  for (const s of setup.subscriptions) {
    const path = `projects/${project}/subscriptions/${s.name}`
    const body = subscriptionBody(project, s, s.push ? setup.pushEndpointFor(s.name) : null)
    let res = await call(host, 'PUT', path, body)
    if (res.status === 409) {
      await call(host, 'DELETE', path)
      res = await call(host, 'PUT', path, body)
    }
    if (res.status !== 200) throw new Error(`Pub/Sub emulator: creating subscription ${s.name} answered ${res.status} ${JSON.stringify(res.json)}`)
  }
}

/** A protobuf Duration as the API writes it ("10s", "0.5s", "600s") in milliseconds. */
export function durationMs(duration: string): number {
  const m = /^(\d+(?:\.\d+)?)s$/.exec(duration)
  if (!m) throw new Error(`not a duration in seconds ("10s"): ${duration}`)
  return Math.round(Number(m[1]) * 1000)
}

/** Publishes one message (data already base64, as in a push body) to `topic`; returns its message id. */
export async function publishMessage(
  host: string,
  project: string,
  topic: string,
  message: { data: string; attributes: Record<string, string> },
): Promise<string> {
  const res = await call(host, 'POST', `projects/${project}/topics/${topic}:publish`, { messages: [message] })
  const id = (res.json.messageIds as string[] | undefined)?.[0]
  if (res.status !== 200 || !id) throw new Error(`Pub/Sub emulator: publishing to ${topic} answered ${res.status} ${JSON.stringify(res.json)}`)
  return id
}

/** Pulls (and acks) up to `max` messages of a pull subscription: decoded data and attributes. */
export async function pullMessages(
  host: string,
  project: string,
  subscription: string,
  max = 100,
): Promise<Array<{ data: string; attributes: Record<string, string> }>> {
  const path = `projects/${project}/subscriptions/${subscription}`
  const res = await call(host, 'POST', `${path}:pull`, { maxMessages: max, returnImmediately: true })
  if (res.status !== 200) throw new Error(`pull ${subscription} answered ${res.status} ${JSON.stringify(res.json)}`)
  const received = (res.json.receivedMessages ?? []) as Array<{ ackId: string; message: { data?: string; attributes?: Record<string, string> } }>
  if (received.length > 0) {
    await call(host, 'POST', `${path}:acknowledge`, { ackIds: received.map((m) => m.ackId) })
  }
  return received.map((m) => ({ data: Buffer.from(m.message.data ?? '', 'base64').toString('utf8'), attributes: m.message.attributes ?? {} }))
}
