import type { PubSub, Topic as PubSubTopic } from '@google-cloud/pubsub'
import { SUBSCRIBED_TOPICS } from '../../model/topics.ts'
import { isAlreadyExists } from './grpc-codes.ts'

/**
 * Bytes the client gathers into one publish request. Pub/Sub caps a request (and a message) at
 * 10 MB; staying below leaves room for attributes and framing. A larger single message (up to
 * the 10 MB message limit) is not refused by this setting: it is sent in a request of its own.
 */
const BATCH_MAX_BYTES = 8 * 1024 * 1024

interface TopicOptions {
  /** prepended to every topic and subscription name */
  prefix: string
  /** the pull subscription of topic T is `T-<suffix>` */
  suffix: string
  createMissing: boolean
  /** topics whose subscription is created with the topic (see PubSubQueueOptions.subscriptions) */
  subscriptions: readonly string[] | undefined
  /** longest a publish may take, retries included */
  publishTimeoutMs: number
}

async function createIgnoringExisting(create: () => Promise<unknown>): Promise<void> {
  try {
    await create()
  } catch (err) {
    if (!isAlreadyExists(err)) throw err
  }
}

/**
 * The Pub/Sub adapter's topics: their names, one `Topic` object per topic with batching tuned for
 * latency (a few ms, not the client's 10 ms default with a 1 MB cap), and, with createMissing,
 * the topics and subscriptions created on first use.
 */
export function pubsubTopics(pubsub: PubSub, options: TopicOptions) {
  const { prefix } = options
  const topics = new Map<string, PubSubTopic>()
  const ensured = new Map<string, Promise<void>>()
  const declared = new Set(options.subscriptions ?? SUBSCRIBED_TOPICS)
  const topicName = (name: string) => `${prefix}${name}`
  const subscriptionName = (name: string) => `${prefix}${name}-${options.suffix}`

  function topicFor(name: string): PubSubTopic {
    let topic = topics.get(name)
    if (!topic) {
      topic = pubsub.topic(topicName(name), {
        batching: { maxMessages: 100, maxMilliseconds: 5, maxBytes: BATCH_MAX_BYTES },
        gaxOpts: { timeout: options.publishTimeoutMs },
      })
      topics.set(name, topic)
    }
    return topic
  }

  /**
   * With createMissing: the topic and the dead-letter topic with a subscription that keeps dead
   * letters; the topic's own subscription when it is declared or `subscribing`.
   */
  function ensure(name: string, subscribing = false): Promise<void> {
    if (!options.createMissing) return Promise.resolve()
    const withSubscription = subscribing || declared.has(name)
    const key = `${name}\u0000${withSubscription}`
    let p = ensured.get(key)
    if (!p) {
      p = (async () => {
        await createIgnoringExisting(() => pubsub.createTopic(topicName(name)))
        if (withSubscription) await createIgnoringExisting(() => pubsub.topic(topicName(name)).createSubscription(subscriptionName(name)))
        const dead = `${name}-dead-letter`
        await createIgnoringExisting(() => pubsub.createTopic(topicName(dead)))
        await createIgnoringExisting(() => pubsub.topic(topicName(dead)).createSubscription(subscriptionName(dead)))
        // the dead letters' second subscription (the operator's alerts), named as infra/pubsub.tf names it
        await createIgnoringExisting(() => pubsub.topic(topicName(dead)).createSubscription(`${prefix}${name}-dead-letter-alerts`))
      })()
      p.catch(() => ensured.delete(key))
      ensured.set(key, p)
    }
    return p
  }

  return {
    topicName,
    subscriptionName,
    ensure,
    topicFor,
    /** sends what the topics' batches still hold */
    async flush(): Promise<void> {
      await Promise.all([...topics.values()].map((t) => t.flush().catch(() => {})))
    },
  }
}
