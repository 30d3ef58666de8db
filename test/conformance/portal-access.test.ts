import { describe } from 'vitest'
import { createEmbeddedPortalAccessStore } from '@lsv/shared/adapters/embedded/portal-access.ts'
import { createFirestorePortalAccessStore } from '@lsv/shared/adapters/google/firestore-portal-access.ts'
import { portalAccessConformance } from './suites/portal-access.ts'
import { twoEmbeddedInstances, twoFirestoreInstances } from './suites/two-instances.ts'

describe('portal access store: embedded (node:sqlite), two handles on one file', () => {
  portalAccessConformance(() => twoEmbeddedInstances(createEmbeddedPortalAccessStore))
})

describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('portal access store: Firestore emulator, two clients', () => {
  portalAccessConformance(() => twoFirestoreInstances(createFirestorePortalAccessStore))
})
