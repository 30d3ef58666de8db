import { describe } from 'vitest'
import { createEmbeddedPushLog } from '@lsv/shared/adapters/embedded/push-log.ts'
import { createFirestorePushLog } from '@lsv/shared/adapters/google/firestore-push-log.ts'
import { pushLogConformance } from './suites/push-log.ts'
import { twoEmbeddedInstances, twoFirestoreInstances } from './suites/two-instances.ts'

describe('push log: embedded (node:sqlite), two handles on one file', () => {
  pushLogConformance(() => twoEmbeddedInstances(createEmbeddedPushLog))
})

describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('push log: Firestore emulator, two clients', () => {
  pushLogConformance(() => twoFirestoreInstances(createFirestorePushLog))
})
