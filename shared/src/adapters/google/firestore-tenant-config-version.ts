import { FieldValue } from '@google-cloud/firestore'
import type { DocumentReference, Firestore } from '@google-cloud/firestore'
import type { TenantConfigVersion } from '../../ports/tenant-lookups.ts'

/**
 * How stale a cached tenant lookup may be on one instance when another instance made the change:
 * 1 s. Each instance reads one small document at most every half bound while it serves lookups
 * (≈ 2 reads a second at most per busy instance, none while idle).
 */
export const FIRESTORE_TENANT_VERSION_BOUND_MS = 1000

/** `tenant_config_version/current`: `{ version }`, incremented by every tenant store write in the write's own commit */
export function tenantConfigVersionRef(firestore: Firestore): DocumentReference {
  return firestore.collection('tenant_config_version').doc('current')
}

/** the fields a write sets (with `{ merge: true }`) on tenantConfigVersionRef to bump the version */
export const bumpVersion = () => ({ version: FieldValue.increment(1) })

/**
 * The Firestore tenant configuration version: the document every tenant store write increments
 * in its own batch or transaction, polled by this instance. A read that started at time s sees
 * every write committed before s (Firestore reads are strongly consistent), so a version is
 * confirmed while its read started at most `boundMs` ago. A lookup after half the bound starts
 * the next read in the background, so a busy instance keeps its version confirmed without
 * waiting; an idle one reads nothing, and its first lookups go to the store until a read
 * returns. `now` is a monotonic clock in ms.
 */
export function createFirestoreTenantConfigVersion(firestore: Firestore, options: { boundMs?: number; now?: () => number } = {}): TenantConfigVersion {
  const boundMs = options.boundMs ?? FIRESTORE_TENANT_VERSION_BOUND_MS
  const now = options.now ?? (() => performance.now())
  const ref = tenantConfigVersionRef(firestore)
  let version: number | null = null
  let readAt = -Infinity
  let reading: number | null = null

  function refresh(started: number): void {
    // one read at a time, unless the one under way is too old to confirm anything any more
    if (reading !== null && started - reading <= boundMs) return
    reading = started
    ref
      .get()
      .then(
        (snap) => {
          // a slower earlier read must not replace what a later one confirmed
          if (started > readAt) {
            version = snap.exists ? Number(snap.get('version') ?? 0) : 0
            readAt = started
          }
        },
        () => {
          // unconfirmed: lookups go to the store until a read succeeds
        },
      )
      .finally(() => {
        if (reading === started) reading = null
      })
  }

  return {
    boundMs,
    confirmed() {
      const t = now()
      const age = t - readAt
      if (age > boundMs / 2) refresh(t)
      return age <= boundMs ? version : null
    },
  }
}
