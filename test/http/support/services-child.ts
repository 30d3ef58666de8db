import type { AddressInfo } from 'node:net'
import { serveRssMeter } from './rss-meter-child.ts'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { ServiceDefinition } from '@lsv/shared/platform/serve.ts'
import { edgeIngest } from '../../../services/edge-ingest/src/service.ts'
import { portalApi } from '../../../services/portal-api/src/service.ts'
import { upsertWorker } from '../../../services/upsert-worker/src/service.ts'
import { webhookDispatcher } from '../../../services/webhook-dispatcher/src/service.ts'
import { createTestDeps } from '../../helpers/deps.ts'
import { createTestTenant } from '../../helpers/tenant.ts'
import { recordingQueue } from '../../ingest/support/harness.ts'

/**
 * The four services in a process of their own, for the memory part of
 * test/reliability/unrouted-body-memory.test.ts: what a load makes them hold is read from this process alone
 * (its RSS), not from the test runner that sends the load. Embedded adapters, the internal routes
 * with their production identities (a token required, as in Google Cloud), listening on loopback.
 *
 * IPC protocol (child_process.fork): the child sends `{ ready, services: [{ name, port, host }] }`;
 * the parent sends `mark` (after a collection, the RSS now; the peak restarts from it), `report`
 * (baseline and peak since the mark) and `close`.
 */
const SERVICES: ServiceDefinition[] = [edgeIngest, portalApi, upsertWorker, webhookDispatcher]

const deps = await createTestDeps({
  queue: recordingQueue().queue,
  config: { pushAudience: 'https://worker.example', pushServiceAccount: 'pubsub-push@example.iam.gserviceaccount.com' },
  env: { DISPATCHER_URL: 'https://dispatcher.example', TASKS_SERVICE_ACCOUNT: 'tasks-invoker@example.iam.gserviceaccount.com' },
})
const tenant = await createTestTenant(deps)
const apps: App[] = []
const services: Array<{ name: string; port: number; host: string }> = []
for (const service of SERVICES) {
  const app = await service.build(deps)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as AddressInfo).port
  apps.push(app)
  services.push({ name: service.name, port, host: service === edgeIngest ? tenant.host : `127.0.0.1:${port}` })
}

const send = serveRssMeter({
  close: async () => {
    for (const app of apps) await app.close()
    await deps.cleanup()
  },
})

send({ type: 'ready', services })
