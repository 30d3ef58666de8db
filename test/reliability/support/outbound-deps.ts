import pino from 'pino'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { loadConfig } from '@lsv/shared/config/config.ts'
import { openEmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createEmbeddedTenantStore } from '@lsv/shared/adapters/embedded/tenant-store.ts'
import { createEmbeddedDeliveryLog } from '@lsv/shared/adapters/embedded/delivery-log.ts'
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
 * The part of PlatformDeps the webhook delivery path uses (tenant store and delivery log on sqlite,
 * a recording scheduler, a manual clock), built directly so the outbound items do not depend on the other
 * adapters. `allowLoopbackWebhooks` is whatever the test says (false for SSRF).
 */
export async function createOutboundDeps(options: { allowLoopback: boolean }) {
  const data = tempDataDir('lsv-rel-outbound-')
  const edb = openEmbeddedDb(data.dir)
  const tenants = createEmbeddedTenantStore(edb)
  const deliveries = createEmbeddedDeliveryLog(edb)
  const tasks = createRecordingScheduler()
  const clock = new ManualClock(Date.now())
  const config = { ...loadConfig({ NODE_ENV: 'test', DATA_DIR: data.dir, OPERATOR_TOKEN: 'x', KEY_PEPPER: 'x' }), allowLoopbackWebhooks: options.allowLoopback }
  const deps = {
    config,
    logger: pino({ level: 'silent' }),
    clock,
    tenants,
    deliveries,
    tasks,
    async close() {},
  } as unknown as PlatformDeps
  return {
    deps,
    clock,
    tasks,
    async cleanup() {
      await tenants.close().catch(() => {})
      await deliveries.close().catch(() => {})
      edb.close()
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
