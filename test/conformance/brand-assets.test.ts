import { describe } from 'vitest'
import { createEmbeddedBrandAssets } from '@lsv/shared/adapters/embedded/brand-assets.ts'
import { createFirestoreBrandAssets } from '@lsv/shared/adapters/google/firestore-brand-assets.ts'
import { brandAssetsConformance } from './suites/brand-assets.ts'
import { twoEmbeddedInstances, twoFirestoreInstances } from './suites/two-instances.ts'

describe('brand assets: embedded (node:sqlite), two handles on one file', () => {
  brandAssetsConformance(() => twoEmbeddedInstances(createEmbeddedBrandAssets))
})

describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('brand assets: Firestore emulator, two clients', () => {
  brandAssetsConformance(() => twoFirestoreInstances(createFirestoreBrandAssets))
})
