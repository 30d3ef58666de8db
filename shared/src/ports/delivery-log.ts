import type { DeliveryRecord } from '../model/records.ts'

/**
 * The webhook delivery log: one record per delivery (its body, status and every attempt), written
 * at each attempt by the dispatcher and read by the portal and the management API. Kept for
 * DELIVERY_RETENTION_MS (adapters/tenant-patch.ts).
 */
export interface DeliveryLog {
  /** creates or replaces the delivery (its indexed members never change after creation) */
  put(delivery: DeliveryRecord): Promise<void>
  get(id: string): Promise<DeliveryRecord | null>
  /**
   * newest first (created_at desc, id desc); `before` is the id of the last row of the previous
   * page. `createdFrom` / `createdBefore` (ISO 8601, as created_at is written) keep only
   * deliveries created at or after / strictly before them: a range on the ordering column, which
   * the same index serves.
   */
  list(integrationId: string, options: { before?: string; limit: number; createdFrom?: string; createdBefore?: string }): Promise<DeliveryRecord[]>
  /**
   * Deliveries still waiting (pending or retrying: only they have a next_attempt_at) whose
   * next_attempt_at is before `before` (ISO 8601), oldest first, across every account: what the
   * stranded-delivery sweep checks (domain/webhooks/sweep.ts).
   */
  listDue(before: string, limit: number): Promise<DeliveryRecord[]>
  /** removes every delivery of the account (tests, account deletion) */
  deleteAccountData(accountId: string): Promise<void>
  close(): Promise<void>
}
