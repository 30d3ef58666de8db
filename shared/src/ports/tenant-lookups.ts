import type { TenantStore } from './tenant-store.ts'

/**
 * The tenant reads made while serving traffic (edge pushes, the read contract, the upsert worker,
 * visits and webhook deliveries), answered from a cache in each instance. An answer may be older
 * than the store by at most the version source's `boundMs` when the change was made by another
 * instance, and never older than the write's return when it was made through the same instance's
 * TenantStore (which clears the cache directly). The TenantStore every caller is given waits that
 * bound out after each write that changes or removes a cached answer (adapters/tenant-write-settle.ts),
 * so such a change is in force on every instance when its write returns. A null (unknown id) is
 * kept only for `getConnection` (adapters/tenant-lookup-cache.ts): a connection created after a miss
 * is found at once through the instance that created it, and within the same bound on the others.
 * The records returned are frozen: shared by every caller, never modified.
 * Management reads (read-modify-write of the configuration) use TenantStore itself.
 */
export type TenantLookups = Pick<
  TenantStore,
  | 'getAccount'
  | 'getAccountByPublicId'
  | 'getApiKeyByHash'
  | 'getConnection'
  | 'listConnections'
  | 'getLocation'
  | 'findLocationByTokenHash'
  | 'listCustomFields'
  | 'getIntegration'
  | 'listIntegrations'
>

/**
 * The version of the tenant configuration as a whole: every TenantStore write changes it, on
 * whichever instance it is made. A lookup cache keeps its answers while the version stays the same.
 */
export interface TenantConfigVersion {
  /**
   * The revocation bound, in real milliseconds: confirmed() returns a version only when it was
   * read from the store by a read that started at most this long ago, so every write committed
   * before that read started is reflected in it. A write that changes a cached answer waits
   * longer than this before it returns (adapters/tenant-write-settle.ts).
   */
  readonly boundMs: number
  /**
   * The version, when confirmed within boundMs; null otherwise (a cache must then not answer from
   * memory). Synchronous: a source that reads asynchronously refreshes in the background.
   */
  confirmed(): number | null
}
