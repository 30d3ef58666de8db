import pino from 'pino'
import { loadConfig, type BaseConfig } from '@lsv/shared/config/config.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { createPlatformDeps, type DepsOverrides } from '@lsv/shared/platform/deps.ts'
import { tempDataDir, emulators } from './embedded.ts'
import { TEST_OPERATOR_TOKEN, TEST_PEPPER } from './test-secrets.ts'

export interface TestDepsOptions extends DepsOverrides {
  /** 'embedded' (default): sqlite in a temp folder; 'emulators': Firestore + Pub/Sub emulators */
  backend?: 'embedded' | 'emulators'
  /** extra environment for loadConfig (e.g. PARTNERCRM_TOKEN_CUTOVER) */
  env?: Record<string, string>
  /** settings over the loaded ones; not the backends or what their selection proves (use env for those) */
  config?: Partial<Omit<BaseConfig, 'gcpProject' | 'dispatcherUrl' | 'tasksServiceAccount'>>
}

/**
 * Platform deps for one test file: embedded adapters in a fresh temp folder, or the
 * emulator-backed ones. `cleanup()` closes adapters and removes the folder. A caller that gives
 * its own DATA_DIR (`env`) owns it: no folder is made, and cleanup() leaves that one in place.
 */
export async function createTestDeps(options: TestDepsOptions = {}): Promise<PlatformDeps & { cleanup(): Promise<void> }> {
  const data = options.env?.DATA_DIR === undefined ? tempDataDir() : null
  const backend = options.backend ?? 'embedded'
  if (backend === 'emulators' && (!emulators.firestore || !emulators.pubsub)) {
    throw new Error('emulators not running: use `npm test` (it starts them) or set FIRESTORE_EMULATOR_HOST and PUBSUB_EMULATOR_HOST')
  }
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    ...(data ? { DATA_DIR: data.dir } : {}),
    OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
    KEY_PEPPER: TEST_PEPPER,
    ALLOW_LOOPBACK_WEBHOOKS: 'true',
    ...(backend === 'emulators'
      ? {
          STORE_BACKEND: 'firestore',
          QUEUE_BACKEND: 'pubsub',
          GOOGLE_CLOUD_PROJECT: emulators.project,
          FIRESTORE_EMULATOR_HOST: emulators.firestore!,
          PUBSUB_EMULATOR_HOST: emulators.pubsub!,
        }
      : { STORE_BACKEND: 'embedded', QUEUE_BACKEND: 'embedded' }),
    ...options.env,
  }
  const config = { ...loadConfig(env), ...options.config }
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' })
  const deps = await createPlatformDeps(config, logger, options)
  return Object.assign(deps, {
    async cleanup() {
      await deps.close()
      data?.cleanup()
    },
  })
}
