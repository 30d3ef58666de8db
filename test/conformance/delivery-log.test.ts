import { describe } from 'vitest'
import { createEmbeddedDeliveryLog } from '@lsv/shared/adapters/embedded/delivery-log.ts'
import { createFirestoreDeliveryLog } from '@lsv/shared/adapters/google/firestore-delivery-log.ts'
import { deliveryLogConformance } from './suites/delivery-log.ts'
import { twoEmbeddedInstances, twoFirestoreInstances } from './suites/two-instances.ts'

describe('delivery log: embedded (node:sqlite, two handles on one file)', () => {
  deliveryLogConformance(() => twoEmbeddedInstances(createEmbeddedDeliveryLog))
})

describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('delivery log: Firestore emulator (two clients)', () => {
  deliveryLogConformance(() => twoFirestoreInstances(createFirestoreDeliveryLog))
})
