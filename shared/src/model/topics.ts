/** Topics of the platform. Each has a dead-letter topic `<topic>-dead-letter`. */
export type Topic = 'contact-batches' | 'visit-events' | 'contact-changes'
/** every topic of the platform: the embedded queue declares the dead-letter subscription of each */
export const TOPICS: readonly Topic[] = ['contact-batches', 'visit-events', 'contact-changes']

export function deadLetterTopicOf(topic: Topic): string {
  return `${topic}-dead-letter`
}

/**
 * Topics that have a subscription from the start, as deployed (infra/pubsub.tf: the push
 * subscriptions of contact-batches and visit-events). `contact-changes` is read only by a
 * BigQuery subscription in Google Cloud; with the embedded queue or the emulator nothing reads
 * it, so nothing keeps it. Every dead-letter topic has a subscription too (`<topic>-dead-letter-sub`).
 */
export const SUBSCRIBED_TOPICS: readonly Topic[] = ['contact-batches', 'visit-events']
