import type { NewOperationalEvent, OperationalEvent } from '../contract/operational-event.ts'

/**
 * Tells the operator about the platform's own health (issue 23; docs/operations.md,
 * "Operational events"). A port, not a direct call of domain/operations/emit.ts, because the
 * code that observes some events sits below the delivery machinery that sends them: the queue
 * pool (domain/webhooks/queue-pool.ts) is imported by deliveries.ts, which emit.ts imports, so a
 * direct call would be an import cycle. The composition root (platform/deps.ts) implements it
 * with emitOperationalEvent over the same deps.
 */
export interface OperationalEvents {
  /**
   * Checks, logs and (with OPERATOR_EVENTS_URL) sends the event as a signed webhook; `key` is
   * what its deterministic id is a hash of (default: its data), so the same observation made
   * twice is one delivery. Resolves with the event as sent, or null when it was only logged.
   * Rejects only when the store or the scheduler does.
   */
  emit(event: NewOperationalEvent, options?: { key?: string }): Promise<OperationalEvent | null>
}
