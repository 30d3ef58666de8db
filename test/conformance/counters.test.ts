import { describe } from 'vitest'
import { createEmbeddedCounters } from '@lsv/shared/adapters/embedded/counters.ts'
import { createFirestoreCounters } from '@lsv/shared/adapters/google/firestore-counters.ts'
import { twoEmbeddedInstances, twoFirestoreInstances } from './suites/two-instances.ts'
import { countersConformance } from './suites/counters.ts'

describe('counters: embedded (node:sqlite), two handles on one file', () => {
  countersConformance(() => twoEmbeddedInstances(createEmbeddedCounters))
})

describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('counters: Firestore emulator, two clients', () => {
  countersConformance(() => twoFirestoreInstances(createFirestoreCounters))
})
