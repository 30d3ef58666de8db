import { describe } from 'vitest'
import { createEmbeddedPortalAccessStore } from '@lsv/shared/adapters/embedded/portal-access.ts'
import { createFirestorePortalAccessStore } from '@lsv/shared/adapters/google/firestore-portal-access.ts'
import { portalRevealsConformance } from './suites/portal-reveals.ts'
import { twoEmbeddedInstances, twoFirestoreInstances } from './suites/two-instances.ts'

describe('portal reveals (one-time secrets): embedded (node:sqlite), two handles on one file', () => {
  portalRevealsConformance(() => twoEmbeddedInstances(createEmbeddedPortalAccessStore))
})

describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('portal reveals (one-time secrets): Firestore emulator, two clients', () => {
  portalRevealsConformance(() => twoFirestoreInstances(createFirestorePortalAccessStore))
})
