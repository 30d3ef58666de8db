import { describe } from 'vitest'
import { createEmbeddedAuditLogStore } from '@lsv/shared/adapters/embedded/audit-log.ts'
import { createFirestoreAuditLogStore } from '@lsv/shared/adapters/google/firestore-audit-log.ts'
import { auditLogConformance } from './suites/audit-log.ts'
import { twoEmbeddedInstances, twoFirestoreInstances } from './suites/two-instances.ts'

describe('audit log store: embedded (node:sqlite), two handles on one file', () => {
  auditLogConformance(() => twoEmbeddedInstances(createEmbeddedAuditLogStore))
})

describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('audit log store: Firestore emulator, two clients', () => {
  auditLogConformance(() => twoFirestoreInstances(createFirestoreAuditLogStore))
})
