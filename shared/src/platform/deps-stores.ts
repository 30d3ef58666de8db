import type { PlatformConfig } from '../config/config.ts'
import type { PlatformDeps } from '../ports/deps.ts'
import type { TenantConfigVersion } from '../ports/tenant-lookups.ts'
import type { EmbeddedDb } from '../adapters/embedded/db.ts'
import type { MonotonicTimer } from '../adapters/tenant-write-settle.ts'
import { redactingDeliveryLog, redactingPushLog } from '../adapters/redacting-stores.ts'

/** the stores of PlatformDeps, chosen by STORE_BACKEND */
export type Stores = Pick<
  PlatformDeps,
  | 'contacts'
  | 'tenants'
  | 'tenantLookups'
  | 'deliveries'
  | 'claims'
  | 'linkTokens'
  | 'portalAccess'
  | 'auditLog'
  | 'rateLimiter'
  | 'counters'
  | 'pushLog'
  | 'brandAssets'
>

/** Stores given instead of built (tests), and what the built tenant store's cache and writes wait on. */
export interface StoreOverrides extends Partial<Omit<Stores, 'tenants' | 'tenantLookups'>> {
  /** a tenant store given here is used as is: no lookup cache unless tenantLookups is given too */
  tenants?: Stores['tenants']
  tenantLookups?: Stores['tenantLookups']
  /** the version the lookup cache of the built tenant store checks (tests: a stand-in) */
  tenantConfigVersion?: TenantConfigVersion
  /** the clock the built tenant store's writes wait on until they are in force everywhere (tests: a fake one) */
  tenantWriteTimer?: MonotonicTimer
}

/** the stores of one backend, before the lookup cache and the redaction are put in front of them */
type BackendStores = Omit<Stores, 'tenantLookups'> & {
  /** the version the lookup cache checks: set when the tenant store was built here, not given */
  tenantVersion: TenantConfigVersion | undefined
}

/** What building the stores needs: the embedded file opened on first use, and where clients to close at the end go. */
export interface StoreBuild {
  embedded(): Promise<EmbeddedDb>
  closers: Array<() => Promise<void>>
}

/** The Firestore stores, each unless given in `overrides`; the client is terminated with the deps. */
async function firestoreStores(projectId: string, overrides: StoreOverrides, build: StoreBuild): Promise<BackendStores> {
  const { Firestore } = await import('@google-cloud/firestore')
  const fs = new Firestore({ projectId, ignoreUndefinedProperties: true })
  build.closers.push(() => fs.terminate())
  const tenantsGiven = overrides.tenants !== undefined
  return {
    contacts: overrides.contacts ?? (await import('../adapters/google/firestore-contact-store.ts')).createFirestoreContactStore(fs),
    tenants: overrides.tenants ?? (await import('../adapters/google/firestore-tenant-store.ts')).createFirestoreTenantStore(fs),
    tenantVersion:
      overrides.tenantConfigVersion ??
      (tenantsGiven ? undefined : (await import('../adapters/google/firestore-tenant-config-version.ts')).createFirestoreTenantConfigVersion(fs)),
    deliveries: overrides.deliveries ?? (await import('../adapters/google/firestore-delivery-log.ts')).createFirestoreDeliveryLog(fs),
    claims: overrides.claims ?? (await import('../adapters/google/firestore-idempotency-claims.ts')).createFirestoreIdempotencyClaims(fs),
    linkTokens: overrides.linkTokens ?? (await import('../adapters/google/firestore-link-tokens.ts')).createFirestoreLinkTokens(fs),
    portalAccess: overrides.portalAccess ?? (await import('../adapters/google/firestore-portal-access.ts')).createFirestorePortalAccessStore(fs),
    auditLog: overrides.auditLog ?? (await import('../adapters/google/firestore-audit-log.ts')).createFirestoreAuditLogStore(fs),
    rateLimiter: overrides.rateLimiter ?? (await import('../adapters/google/firestore-rate-limiter.ts')).createFirestoreRateLimiter(fs),
    counters: overrides.counters ?? (await import('../adapters/google/firestore-counters.ts')).createFirestoreCounters(fs),
    pushLog: overrides.pushLog ?? (await import('../adapters/google/firestore-push-log.ts')).createFirestorePushLog(fs),
    brandAssets: overrides.brandAssets ?? (await import('../adapters/google/firestore-brand-assets.ts')).createFirestoreBrandAssets(fs),
  }
}

/** The stores on the embedded file, each unless given in `overrides`. */
async function embeddedStores(overrides: StoreOverrides, build: StoreBuild): Promise<BackendStores> {
  const db = await build.embedded()
  const tenantsGiven = overrides.tenants !== undefined
  return {
    contacts: overrides.contacts ?? (await import('../adapters/embedded/contact-store.ts')).createEmbeddedContactStore(db),
    tenants: overrides.tenants ?? (await import('../adapters/embedded/tenant-store.ts')).createEmbeddedTenantStore(db),
    tenantVersion:
      overrides.tenantConfigVersion ??
      (tenantsGiven ? undefined : (await import('../adapters/embedded/tenant-config-version.ts')).createEmbeddedTenantConfigVersion(db)),
    deliveries: overrides.deliveries ?? (await import('../adapters/embedded/delivery-log.ts')).createEmbeddedDeliveryLog(db),
    claims: overrides.claims ?? (await import('../adapters/embedded/idempotency-claims.ts')).createEmbeddedIdempotencyClaims(db),
    linkTokens: overrides.linkTokens ?? (await import('../adapters/embedded/link-tokens.ts')).createEmbeddedLinkTokens(db),
    portalAccess: overrides.portalAccess ?? (await import('../adapters/embedded/portal-access.ts')).createEmbeddedPortalAccessStore(db),
    auditLog: overrides.auditLog ?? (await import('../adapters/embedded/audit-log.ts')).createEmbeddedAuditLogStore(db),
    rateLimiter: overrides.rateLimiter ?? (await import('../adapters/embedded/rate-limiter.ts')).createEmbeddedRateLimiter(db),
    counters: overrides.counters ?? (await import('../adapters/embedded/counters.ts')).createEmbeddedCounters(db),
    pushLog: overrides.pushLog ?? (await import('../adapters/embedded/push-log.ts')).createEmbeddedPushLog(db),
    brandAssets: overrides.brandAssets ?? (await import('../adapters/embedded/brand-assets.ts')).createEmbeddedBrandAssets(db),
  }
}

/**
 * The stores the configuration selects. The debuggers' sinks pass the redaction policy whatever
 * store was chosen; a tenant store built here gets the lookup cache in front of it, and its writes
 * wait until they are in force on every instance.
 */
export async function buildStores(config: PlatformConfig, overrides: StoreOverrides, build: StoreBuild): Promise<Stores> {
  const { tenantVersion, ...stores } =
    config.storeBackend === 'firestore' ? await firestoreStores(config.gcpProject, overrides, build) : await embeddedStores(overrides, build)
  const redacted = { ...stores, pushLog: redactingPushLog(stores.pushLog), deliveries: redactingDeliveryLog(stores.deliveries) }
  const givenLookups = overrides.tenantLookups ?? overrides.tenants
  if (givenLookups) return { ...redacted, tenantLookups: givenLookups }
  // the built store: lookups cached, its writes clearing the cache (tenantVersion is set with it)
  const cache = (await import('../adapters/tenant-lookup-cache.ts')).createTenantLookupCache(stores.tenants, tenantVersion!)
  // every instance's cache may answer from memory for the version's bound: a write that can change
  // a cached answer returns only once that has passed, so it is in force everywhere when it returns
  const { settleTenantWrites, realTimer } = await import('../adapters/tenant-write-settle.ts')
  const tenants = settleTenantWrites(cache.tenants, tenantVersion!.boundMs, overrides.tenantWriteTimer ?? realTimer)
  return { ...redacted, tenants, tenantLookups: cache.lookups }
}
