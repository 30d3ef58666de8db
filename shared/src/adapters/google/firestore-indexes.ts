/**
 * Every composite index and TTL policy the Firestore adapters rely on. Terraform declares them
 * (infra tests assert each entry here has its `google_firestore_index` / `google_firestore_field`),
 * so a new composite query or TTL field must be added here first.
 */

interface FirestoreIndexField {
  fieldPath: string
  order: 'ASCENDING' | 'DESCENDING'
}

export interface FirestoreCompositeIndex {
  collectionGroup: string
  queryScope: 'COLLECTION'
  fields: FirestoreIndexField[]
  /** the query that needs it, for the reader */
  usedBy: string
}

export interface FirestoreTtlField {
  collectionGroup: string
  field: string
}

export const FIRESTORE_COMPOSITE_INDEXES: readonly FirestoreCompositeIndex[] = [
  {
    collectionGroup: 'deliveries',
    queryScope: 'COLLECTION',
    fields: [
      { fieldPath: 'integration_id', order: 'ASCENDING' },
      { fieldPath: 'created_at', order: 'DESCENDING' },
      { fieldPath: '__name__', order: 'DESCENDING' },
    ],
    usedBy: 'DeliveryLog.list: where integration_id == ? [created_at range] order by created_at desc, __name__ desc',
  },
  {
    collectionGroup: 'deliveries',
    queryScope: 'COLLECTION',
    fields: [
      { fieldPath: 'integration_id', order: 'ASCENDING' },
      { fieldPath: 'status', order: 'ASCENDING' },
      { fieldPath: 'created_at', order: 'DESCENDING' },
      { fieldPath: '__name__', order: 'DESCENDING' },
    ],
    usedBy:
      'DeliveryLog.list with a status: where integration_id == ? and status == ? [created_at range] order by created_at desc, __name__ desc; DeliveryLog.countByStatus: count() of the same where',
  },
]

export const FIRESTORE_TTL_FIELDS: readonly FirestoreTtlField[] = [
  // tenant store: idempotency claims (claimOnce) and delivery history (kept 30 days)
  { collectionGroup: 'claims', field: 'expire_at' },
  { collectionGroup: 'deliveries', field: 'expire_at' },
  // rate limiter: fixed-window counters
  { collectionGroup: 'rate_limits', field: 'expire_at' },
  // portal access: sign-in links (after they expire) and sessions (after their absolute end)
  { collectionGroup: 'portal_links', field: 'expire_at' },
  { collectionGroup: 'portal_sessions', field: 'expire_at' },
  // and secrets shown once after a form (after their few minutes)
  { collectionGroup: 'portal_reveals', field: 'expire_at' },
  // the inbound debugger's recent pushes (push_log/{connection}/pushes: kept 7 days)
  { collectionGroup: 'pushes', field: 'expire_at' },
  // and the refused ones, kept apart (push_log/{connection}/refused_pushes: kept 7 days)
  { collectionGroup: 'refused_pushes', field: 'expire_at' },
  // the worker's refusals of those pushes (push_log/{connection}/push_outcomes: kept 7 days)
  { collectionGroup: 'push_outcomes', field: 'expire_at' },
]
