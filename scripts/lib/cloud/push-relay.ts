/**
 * The push relay: the Pub/Sub emulator pushes every subscription here (`/<subscription>`) because
 * it signs nothing; the relay adds what Pub/Sub adds in Google Cloud, an `Authorization: Bearer`
 * ID token for the subscription's declared `oidc_token` (service account email and audience,
 * none when Terraform declares none), and forwards the body (content type unchanged) to the
 * endpoint Terraform declares. Before that it does what Cloud Run does in front of the service:
 * a push whose identity holds no run.routes.invoke on the target service (the grants infra/
 * declares) gets a 403 and never reaches the service.
 *
 * Delivery is the relay's, not the emulator's: the emulator ignores retry and dead-letter
 * policies, never sends `deliveryAttempt`, and mostly never pushes a nacked message again
 * (docs/deployed-shape.md). So the relay takes each push off the emulator at once (answers 204,
 * the emulator acks) and holds the message in memory, where it delivers it as Pub/Sub would:
 * - success is 102, 200, 201, 202 or 204; any other status, a connection failure, or no answer
 *   within the ack deadline is a nack;
 * - a nacked message is delivered again after the retry policy's backoff (minimum_backoff doubled
 *   per attempt, at most maximum_backoff);
 * - with a dead-letter policy, the wrapped body carries `deliveryAttempt` (1, 2, …), and after
 *   max_delivery_attempts the message is published to the dead-letter topic (with Pub/Sub's
 *   CloudPubSubDeadLetter* attributes) and dropped from the subscription.
 * Holding in memory loses nothing the emulator would keep: the emulator is in memory too and
 * lives exactly as long as the relay (start:cloud stops both). Every attempt is one JSON line.
 */
import { appendFileSync } from 'node:fs'
import { listen, readBody, sendJson, type Listener } from './http.ts'
import { forwardedAuthorization, frontEndMark } from './front-end.ts'
import { invokerRefusal, type Iam } from './iam.ts'
import type { OidcIssuer } from './oidc-issuer.ts'
import { publishMessage } from './pubsub-setup.ts'

export interface RelayRoute {
  subscription: string
  /** the service endpoint (loopback URL) */
  target: string
  /** the Cloud Run service the endpoint belongs to (its invoker grants apply), null for another URL */
  service: string | null
  oidc: { serviceAccountEmail: string; audience: string } | null
  ackDeadlineSeconds: number
  /** false for `no_wrapper`: the body is the bare payload, with no envelope to carry `deliveryAttempt` */
  wrapped: boolean
  /** retry_policy in milliseconds; null: none declared */
  retry: { minimumBackoffMs: number; maximumBackoffMs: number } | null
  /** dead_letter_policy (the topic's short name); null: retried until the run ends */
  deadLetter: { topic: string; maxDeliveryAttempts: number } | null
}

export interface PushRelay {
  /** the push endpoint to give the emulator for a subscription */
  endpointFor(subscription: string): string
  /** messages taken from the emulator and not yet acked or dead-lettered */
  held(): number
  close(): Promise<void>
}

/** One delivery attempt, as logged (tests and bench:latency read these). */
export interface RelayLogLine {
  /** when the attempt started */
  time: string
  subscription: string
  /** the Pub/Sub message id (null for a `no_wrapper` body, which has none) */
  messageId: string | null
  /** 1 for the first delivery; what `deliveryAttempt` says when the subscription has a dead-letter policy */
  attempt: number
  target: string
  identity: string | null
  /** the service's status; 403 from Cloud Run's invoker check; 502 when no answer came (see error) */
  status: number
  ms: number
  /** acked; retry after retryInMs; or dead-lettered to deadLetterTopic */
  outcome: 'acked' | 'retry' | 'dead-lettered'
  retryInMs?: number
  deadLetterTopic?: string
  error?: string
}

/** Pub/Sub push: the statuses that acknowledge a message (Pub/Sub docs, "Push subscriptions"). */
const PUSH_SUCCESS = new Set([102, 200, 201, 202, 204])

/**
 * Without a retry policy Pub/Sub redelivers at once; the relay still waits a little (100 ms,
 * doubling to 60 s) so that an endpoint that always fails is not called in a tight loop.
 */
const NO_POLICY_BACKOFF = { minimumBackoffMs: 100, maximumBackoffMs: 60_000 }

/** The wait after failed attempt `attempt` (1-based): minimum_backoff × 2^(attempt-1), at most maximum_backoff. */
export function backoffMs(retry: RelayRoute['retry'], attempt: number): number {
  const { minimumBackoffMs, maximumBackoffMs } = retry ?? NO_POLICY_BACKOFF
  return Math.min(maximumBackoffMs, minimumBackoffMs * 2 ** Math.min(attempt - 1, 30))
}

interface HeldMessage {
  route: RelayRoute
  body: Buffer
  contentType: string
  /** the parsed envelope of a wrapped push; null for a bare (`no_wrapper`) body */
  envelope: { message: { data?: string; attributes?: Record<string, string>; messageId?: string; publishTime?: string } } | null
  messageId: string | null
}

function parseEnvelope(body: Buffer): HeldMessage['envelope'] {
  try {
    const json = JSON.parse(body.toString('utf8')) as unknown
    if (typeof json === 'object' && json !== null && 'message' in json && typeof json.message === 'object' && json.message !== null) {
      return json as HeldMessage['envelope']
    }
  } catch {
    // not a wrapped push: forwarded as it came
  }
  return null
}

export async function startPushRelay(
  routes: RelayRoute[],
  issuer: OidcIssuer,
  iam: Iam,
  logFile: string,
  pubsub: {
    emulatorHost: string
    project: string /** added as X-Local-Front-End to pushes to a Cloud Run service (front-end.ts) */
    frontEndSecret?: string | null
  },
): Promise<PushRelay> {
  const bySubscription = new Map(routes.map((r) => [r.subscription, r]))
  for (const r of routes) {
    const host = new URL(r.target).hostname
    if (host !== '127.0.0.1' && host !== 'localhost' && host !== '[::1]') throw new Error(`push relay: ${r.subscription} targets ${r.target}, not this machine`)
  }
  const log = (line: RelayLogLine) => appendFileSync(logFile, `${JSON.stringify(line)}\n`)
  // closing aborts the attempts in flight and the waits between attempts
  const closing = new AbortController()
  /** subscription/messageId of every message held, so a push the emulator repeats is not delivered twice at once */
  const holding = new Set<string>()
  let anonymous = 0

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms)
      function done() {
        clearTimeout(timer)
        closing.signal.removeEventListener('abort', done)
        resolve()
      }
      closing.signal.addEventListener('abort', done, { once: true })
    })

  /** One push to the service: its status, or 502 with the reason when it gave no answer in time. */
  async function attemptOnce(held: HeldMessage, attempt: number): Promise<{ status: number; error?: string }> {
    const { route } = held
    const headers: Record<string, string> = {
      'content-type': held.contentType,
      'user-agent': 'APIs-Google; (+https://developers.google.com/webmasters/APIs-Google.html)',
      ...frontEndMark(route.service, pubsub.frontEndSecret),
    }
    // as the container behind Cloud Run's front end receives it: signature stripped (front-end.ts)
    if (route.oidc) headers.authorization = forwardedAuthorization(iam, route.service, await issuer.mint(route.oidc.serviceAccountEmail, route.oidc.audience))
    const refused = route.service === null ? null : invokerRefusal(iam, route.oidc?.serviceAccountEmail ?? null, route.service)
    if (refused) return { status: 403, error: refused }
    // Pub/Sub counts delivery attempts (and sends them) only when a dead-letter policy exists
    const body = held.envelope && route.deadLetter ? Buffer.from(JSON.stringify({ ...held.envelope, deliveryAttempt: attempt })) : held.body
    try {
      const answer = await fetch(route.target, {
        method: 'POST',
        headers,
        body: new Uint8Array(body),
        signal: AbortSignal.any([closing.signal, AbortSignal.timeout(route.ackDeadlineSeconds * 1000)]),
      })
      await answer.arrayBuffer()
      return { status: answer.status }
    } catch (err) {
      const e = err as Error
      const error =
        e.name === 'TimeoutError'
          ? `no answer within the ack deadline (${route.ackDeadlineSeconds} s)`
          : `${e.message}${e.cause ? `: ${(e.cause as Error).message}` : ''}`
      return { status: 502, error }
    }
  }

  /** What Pub/Sub does after max_delivery_attempts: the message, with its source named, on the dead-letter topic. */
  async function deadLetter(held: HeldMessage, topic: string, attempts: number): Promise<void> {
    const message = held.envelope?.message
    await publishMessage(pubsub.emulatorHost, pubsub.project, topic, {
      data: message ? (message.data ?? '') : held.body.toString('base64'),
      attributes: {
        ...(message?.attributes ?? {}),
        CloudPubSubDeadLetterSourceDeliveryCount: String(attempts),
        CloudPubSubDeadLetterSourceSubscription: held.route.subscription,
        CloudPubSubDeadLetterSourceSubscriptionProject: pubsub.project,
        ...(message?.publishTime ? { CloudPubSubDeadLetterSourceTopicPublishTime: message.publishTime } : {}),
      },
    })
  }

  async function deliver(held: HeldMessage, key: string): Promise<void> {
    const { route } = held
    try {
      for (let attempt = 1; !closing.signal.aborted; attempt++) {
        const time = new Date().toISOString()
        const started = Date.now()
        const result = await attemptOnce(held, attempt)
        if (closing.signal.aborted) return
        const line = {
          time,
          subscription: route.subscription,
          messageId: held.messageId,
          attempt,
          target: route.target,
          identity: route.oidc?.serviceAccountEmail ?? null,
          status: result.status,
          ms: Date.now() - started,
          ...(result.error ? { error: result.error } : {}),
        }
        if (PUSH_SUCCESS.has(result.status)) {
          log({ ...line, outcome: 'acked' })
          return
        }
        if (route.deadLetter && attempt >= route.deadLetter.maxDeliveryAttempts) {
          try {
            await deadLetter(held, route.deadLetter.topic, attempt)
            log({ ...line, outcome: 'dead-lettered', deadLetterTopic: route.deadLetter.topic })
            return
          } catch (err) {
            // dead lettering is best effort in Pub/Sub too; the message stays held and is tried again
            line.error = `${line.error ?? `status ${line.status}`}; dead-lettering failed: ${(err as Error).message}`
          }
        }
        const wait = backoffMs(route.retry, attempt)
        log({ ...line, outcome: 'retry', retryInMs: wait })
        await sleep(wait)
      }
    } finally {
      holding.delete(key)
    }
  }

  const listener: Listener = await listen(async (req, res) => {
    const name = decodeURIComponent((req.url ?? '/').slice(1).split('?')[0]!)
    const route = bySubscription.get(name)
    if (!route || req.method !== 'POST') return sendJson(res, 404, { error: `no push subscription ${name}` })
    const body = await readBody(req)
    const envelope = route.wrapped ? parseEnvelope(body) : null
    const messageId = envelope?.message.messageId ?? null
    const key = `${name}/${messageId ?? `anonymous-${++anonymous}`}`
    // held from here on: the emulator may forget it (it acks on this 204)
    res.writeHead(204)
    res.end()
    if (holding.has(key) || closing.signal.aborted) return
    holding.add(key)
    void deliver({ route, body, contentType: req.headers['content-type'] ?? 'application/json', envelope, messageId }, key)
  })
  return {
    endpointFor: (subscription) => `${listener.origin}/${encodeURIComponent(subscription)}`,
    held: () => holding.size,
    close: async () => {
      closing.abort()
      await listener.close()
    },
  }
}
