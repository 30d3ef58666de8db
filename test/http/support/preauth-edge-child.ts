import type { AddressInfo } from 'node:net'
import { serveRssMeter } from './rss-meter-child.ts'
import { PreAuthBudget } from '@lsv/shared/domain/ingest/preauth-budget.ts'
import { buildApp as buildEdge } from '../../../services/edge-ingest/src/app.ts'
import { createTestDeps } from '../../helpers/deps.ts'
import { createTestTenant } from '../../helpers/tenant.ts'

/**
 * The edge in a process of its own, for test/http/partnercrm-preauth-memory.test.ts: the memory a
 * load makes the edge hold is read from this process alone (its RSS), not from the test runner
 * that sends the load. Embedded adapters (the real queue and stores, as `npm start` has them) in a
 * temporary folder, the production pre-authentication budget (PRE_AUTH_LIMITS), listening on
 * loopback.
 *
 * IPC protocol (child_process.fork): the child sends `{ ready, port, tenants }`; the parent sends
 * `mark` (a baseline: after a collection, the RSS now; the RSS peak restarts from it), `report`
 * (RSS baseline and peak since the mark, the most the budget ever held at once, what it holds now)
 * and `close`.
 */
const TENANTS = Number(process.env.PREAUTH_CHILD_TENANTS ?? '8')

const deps = await createTestDeps()
const tenants = []
for (let i = 0; i < TENANTS; i++) {
  const t = await createTestTenant(deps)
  tenants.push({ host: t.host, locationId: t.locationId, accountId: t.account.id })
}
const budget = new PreAuthBudget()
const edge = await buildEdge(deps, { preAuthBudget: budget })
await edge.listen({ port: 0, host: '127.0.0.1' })

const send = serveRssMeter({
  extra: () => ({ budgetPeak: budget.peak, budgetInUse: budget.inUse }),
  close: async () => {
    await edge.close()
    await deps.cleanup()
  },
})

send({ type: 'ready', port: (edge.server.address() as AddressInfo).port, tenants })
