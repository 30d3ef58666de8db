import type { DeliveryRecord } from '../model/records.ts'

type DeliveryStatus = DeliveryRecord['status']

/**
 * The webhook delivery log: one record per delivery (its body, status and every attempt), written
 * at each attempt by the dispatcher and read by the portal and the management API. Kept for
 * DELIVERY_RETENTION_MS (adapters/tenant-patch.ts).
 */
export interface DeliveryLog {
  /** creates or replaces the delivery (its integration, account and created_at never change after creation) */
  put(delivery: DeliveryRecord): Promise<void>
  get(id: string): Promise<DeliveryRecord | null>
  /**
   * newest first (created_at desc, id desc); `before` is the id of the last row of the previous
   * page. `createdFrom` / `createdBefore` (ISO 8601, as created_at is written) keep only
   * deliveries created at or after / strictly before them: a range on the ordering column, which
   * the same index serves. With `status`, only the deliveries now in that status, in the same
   * order and with the same cursor (an index on integration, status and time serves it: no row of
   * another status is read).
   */
  list(
    integrationId: string,
    options: { before?: string; limit: number; createdFrom?: string; createdBefore?: string; status?: DeliveryStatus },
  ): Promise<DeliveryRecord[]>
  /**
   * How many deliveries of the integration (created in the optional range, as `list`) are in each
   * status, each count stopping at `cap`: a count equal to `cap` means "at least cap". Counted
   * on the index `list` uses with `status`, without reading the records.
   */
  countByStatus(integrationId: string, options: { createdFrom?: string; createdBefore?: string; cap: number }): Promise<Record<DeliveryStatus, number>>
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
