import pino from 'pino'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { loadConfig } from '@lsv/shared/config/config.ts'
import { createPlatformDeps } from '@lsv/shared/platform/deps.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { TaskRequest, TaskScheduler } from '@lsv/shared/ports/task-scheduler.ts'
import { createDelivery } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { tempDataDir, randomSuffix } from '../../helpers/embedded.ts'
import { ACCOUNT_ONLY, createTestTenant } from '../../helpers/tenant.ts'

/** A task scheduler that only records what was enqueued: the test runs each task by hand. */
function createRecordingScheduler(): TaskScheduler & { enqueued: TaskRequest[] } {
  const enqueued: TaskRequest[] = []
  return {
    enqueued,
    async ensureQueue() {},
    async enqueue(task) {
      enqueued.push(task)
    },
    async start() {
      return { close: async () => {} }
    },
    async close() {},
  }
}

/**
 * The deps the webhook delivery path runs on: the composition root's own (createPlatformDeps on a
 * fresh embedded data folder: tenant store behind its lookup cache, delivery log, webhook sender),
 * with a recording scheduler and a manual clock put in through its overrides, so the outbound
 * items never run on a hand-assembled subset that drifts from what the services get.
 * `allowLoopbackWebhooks` is whatever the test says (false for SSRF).
 */
export async function createOutboundDeps(options: { allowLoopback: boolean }) {
  const data = tempDataDir('lsv-rel-outbound-')
  const tasks = createRecordingScheduler()
  const clock = new ManualClock(Date.now())
  const config = { ...loadConfig({ NODE_ENV: 'test', DATA_DIR: data.dir, OPERATOR_TOKEN: 'x', KEY_PEPPER: 'x' }), allowLoopbackWebhooks: options.allowLoopback }
  const deps = await createPlatformDeps(config, pino({ level: 'silent' }), { clock, tasks })
  return {
    deps,
    clock,
    tasks,
    async cleanup() {
      await deps.close().catch(() => {})
      data.cleanup()
    },
  }
}

/** An active account + integration pointing at `url` (the tests' tenant harness), and a pending delivery to it. */
export async function createPendingDelivery(deps: PlatformDeps, url: string) {
  const { account, integration } = await createTestTenant(deps, { ...ACCOUNT_ONLY, integration: { url } })
  const now = new Date(deps.clock.now()).toISOString()
  const eventId = `evt_${randomSuffix(8)}`
  const delivery = await createDelivery(deps, {
    accountId: account.id,
    integrationId: integration.id,
    eventId,
    body: JSON.stringify({ id: eventId, event: 'visitor.identified' }),
    now,
  })
  return { account, integration, delivery }
}
