import { describe } from 'vitest'
import { createEmbeddedIdempotencyClaims } from '@lsv/shared/adapters/embedded/idempotency-claims.ts'
import { createFirestoreIdempotencyClaims } from '@lsv/shared/adapters/google/firestore-idempotency-claims.ts'
import { idempotencyClaimsConformance } from './suites/idempotency-claims.ts'
import { twoEmbeddedInstances, twoFirestoreInstances } from './suites/two-instances.ts'

describe('idempotency claims: embedded (node:sqlite, two handles on one file)', () => {
  idempotencyClaimsConformance(() => twoEmbeddedInstances(createEmbeddedIdempotencyClaims))
})

describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('idempotency claims: Firestore emulator (two clients)', () => {
  idempotencyClaimsConformance(() => twoFirestoreInstances(createFirestoreIdempotencyClaims))
})
