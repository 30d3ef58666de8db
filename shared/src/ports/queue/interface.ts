/** Topics of the platform. Each has a dead-letter topic `<topic>-dead-letter`. */
export type Topic = 'contact-batches' | 'visit-events' | 'contact-changes'
export const TOPICS: readonly Topic[] = ['contact-batches', 'visit-events', 'contact-changes']

export function deadLetterTopicOf(topic: Topic): string {
  return `${topic}-dead-letter`
}

export interface QueueMessage {
  id: string
  data: Buffer
  attributes: Record<string, string>
  /** 1 on the first delivery */
  deliveryAttempt: number
  publishedAt: string
}

export type HandlerResult = 'ack' | 'nack'
export type MessageHandler = (message: QueueMessage) => Promise<HandlerResult>

export interface SubscribeOptions {
  /** concurrent messages in flight for this subscriber */
  maxInFlight?: number
  /** after this many deliveries a nacked message goes to the dead-letter topic (default 5) */
  maxDeliveryAttempts?: number
}

export interface Subscription {
  close(): Promise<void>
}

/**
 * At-least-once messaging. `publish` resolves only once the message is durable (embedded: fsynced
 * to disk; Pub/Sub: acknowledged by the service) and rejects otherwise. A handler that throws
 * counts as a nack.
 */
export interface Queue {
  publish(topic: Topic, data: Buffer, attributes?: Record<string, string>): Promise<string>
  subscribe(topic: Topic, handler: MessageHandler, options?: SubscribeOptions): Promise<Subscription>
  close(): Promise<void>
}
