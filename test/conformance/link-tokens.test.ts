import { describe } from 'vitest'
import { createEmbeddedLinkTokens } from '@lsv/shared/adapters/embedded/link-tokens.ts'
import { createFirestoreLinkTokens } from '@lsv/shared/adapters/google/firestore-link-tokens.ts'
import { linkTokenStoreConformance } from './suites/link-tokens.ts'
import { twoEmbeddedInstances, twoFirestoreInstances } from './suites/two-instances.ts'

describe('link token store: embedded (node:sqlite, two handles on one file)', () => {
  linkTokenStoreConformance(() => twoEmbeddedInstances(createEmbeddedLinkTokens))
})

describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('link token store: Firestore emulator (two clients)', () => {
  linkTokenStoreConformance(() => twoFirestoreInstances(createFirestoreLinkTokens))
})
