import type { PlatformDeps } from '../../ports/deps.ts'
import type { HandlerResult, QueueMessage } from '../../ports/queue.ts'
import { handleVisitEvent } from './handle.ts'
import { InvalidVisitEvent, parseVisitMessage } from './parse.ts'

/**
 * The visit-events message handler (pull subscription locally, Pub/Sub push in production).
 * An invalid message is acked and logged: redelivering it cannot make it valid (the dead-letter
 * topic is for messages that fail for transient reasons). Other failures nack.
 */
export function createVisitMessageHandler(deps: PlatformDeps) {
  return async (message: QueueMessage): Promise<HandlerResult> => {
    let event
    try {
      event = parseVisitMessage(message.data, message.attributes)
    } catch (err) {
      if (err instanceof InvalidVisitEvent) {
        deps.logger.warn({ messageId: message.id, issues: err.issues }, 'dropping an invalid visit event')
        return 'ack'
      }
      throw err
    }
    try {
      const outcome = await handleVisitEvent(deps, event, message.publishedAt)
      if (outcome.result === 'skipped') deps.logger.info({ eventId: event.id, reason: outcome.reason }, 'visit event skipped')
      return 'ack'
    } catch (err) {
      deps.logger.error({ err, eventId: event.id }, 'visit event failed')
      return 'nack'
    }
  }
}
