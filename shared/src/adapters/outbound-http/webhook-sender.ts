import type { Dispatcher } from 'undici'
import type { WebhookSender } from '../../ports/webhook-sender.ts'
import { createSafeAgent } from './safe-agent.ts'
import { postOnce } from './send.ts'

/** A sender over a given dispatcher (tests hand in an agent of their own). */
export function createWebhookSender(dispatcher: Dispatcher): WebhookSender {
  return { post: (url, body, headers) => postOnce(dispatcher, url, body, headers) }
}

const senders = new Map<boolean, WebhookSender>()

/**
 * The process-wide sender for a loopback policy: one SSRF-filtering keep-alive agent per policy,
 * shared by every delivery of the process (connections to a receiver are reused).
 */
export function webhookSenderFor(allowLoopback: boolean): WebhookSender {
  let sender = senders.get(allowLoopback)
  if (!sender) senders.set(allowLoopback, (sender = createWebhookSender(createSafeAgent({ allowLoopback }))))
  return sender
}
