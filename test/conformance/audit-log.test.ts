import { describe } from 'vitest'
import { createEmbeddedAuditLogStore } from '@lsv/shared/ports/audit-log/embedded.ts'
import { createFirestoreAuditLogStore } from '@lsv/shared/ports/audit-log/firestore.ts'
import { auditLogConformance } from './suites/audit-log.ts'
import { twoEmbeddedInstances, twoFirestoreInstances } from './suites/two-instances.ts'

describe('audit log store: embedded (node:sqlite), two handles on one file', () => {
  auditLogConformance(() => twoEmbeddedInstances(createEmbeddedAuditLogStore))
})

describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('audit log store: Firestore emulator, two clients', () => {
  auditLogConformance(() => twoFirestoreInstances(createFirestoreAuditLogStore))
})
