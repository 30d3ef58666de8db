/**
 * Portal speed benchmark (`npm run bench:portal`; issue 14 "each page renders in under 100 ms
 * server time on the local stack with 100,000 contacts"; docs/portal.md "Speed",
 * docs/performance.md).
 *
 * Builds the embedded stack in this process with the tests' own harness (test/ingest/support),
 * fills one account with BENCH_CONTACTS (100,000) contacts straight through the contact store's
 * upsertBatch (no HTTP), adds connections, keys, an integration with deliveries and the audit
 * entries those actions write, signs in with a minted portal link, then times every portal screen
 * with app.inject (warm-up, then BENCH_REQUESTS requests each; p50 and p99 of the wall time of
 * each inject, i.e. server time without sockets). `GET /healthz` on the same app is the control:
 * read the figures as ratios to it on a loaded machine.
 */
import { cpus, loadavg } from 'node:os'
import { performance } from 'node:perf_hooks'
import { mergeContact } from '../shared/src/domain/contacts/merge.ts'
import type { ContactUpsertInput } from '../shared/src/model/records.ts'
import { createIngestFixture } from '../test/ingest/support/harness.ts'
import { drainDueTasks, startReceiver } from '../test/outbound/harness.ts'
import { signIn } from '../test/portal/support.ts'
import { formPost, page } from '../test/portal/screens-support.ts'

const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 100_000)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 50)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 10)
const BATCH = 500
const GOAL_MS = 100

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!
}

const fixture = await createIngestFixture()
const receiver = await startReceiver()
try {
  const { deps } = fixture.h
  const app = fixture.h.portal
  const accountId = fixture.t.account.id

  // ---- 100,000 contacts, straight through the store port ----
  const fillStart = performance.now()
  const at = new Date().toISOString()
  for (let from = 0; from < CONTACTS; from += BATCH) {
    const inputs: ContactUpsertInput[] = []
    for (let i = from; i < Math.min(CONTACTS, from + BATCH); i++) {
      inputs.push({
        source: 'crm',
        external_id: `c-${i}`,
        writer: 'form',
        at,
        origin: `bench:${i}`,
        patch: { identity: { first_name: `First${i}`, last_name: `Last${i}` }, business_email: `p${i}@example.com` },
      })
    }
    await deps.contacts.upsertBatch(accountId, inputs, mergeContact)
  }
  console.log(`filled ${CONTACTS} contacts in ${((performance.now() - fillStart) / 1000).toFixed(1)} s`)

  // ---- connections, keys, an integration with deliveries (each action writes its audit entry) ----
  const cookie = await signIn(app, accountId)
  const expect = async (what: string, p: Promise<{ statusCode: number; body: string }>, ...ok: number[]) => {
    const res = await p
    if (!ok.includes(res.statusCode)) throw new Error(`${what} -> ${res.statusCode} ${res.body.slice(0, 300)}`)
    return res
  }
  for (const name of ['Main CRM', 'Shop', 'Events']) {
    await expect(
      `create connection ${name}`,
      formPost(app, '/portal/connections', cookie, { type: 'api', name, source: name.toLowerCase().replace(' ', '-') }),
      303,
    )
  }
  const connectionId = fixture.t.api.id
  for (const name of ['prod', 'staging', 'ci']) {
    await expect(`create key ${name}`, formPost(app, `/portal/connections/${connectionId}/keys`, cookie, { scopes: 'contacts:write', name }), 201)
  }
  for (const n of [1, 2]) {
    await expect(
      `create webhook ${n}`,
      formPost(app, '/portal/webhooks', cookie, { url: `${receiver.url}?n=${n}`, payload_version: '2', contact_handles: 'on' }),
      201,
    )
  }
  const integrations = await deps.tenants.listIntegrations(accountId)
  const integrationId = integrations[0]!.id
  for (let i = 0; i < 5; i++) {
    await expect('send test event', formPost(app, `/portal/webhooks/${integrationId}/test`, cookie), 303)
    await drainDueTasks(deps)
  }

  if (receiver.requests.length < 5) throw new Error(`the receiver got ${receiver.requests.length} test events, not 5`)
  const detailPage = await expect('integration page', page(app, `/portal/webhooks/${integrationId}`, cookie), 200)
  if (!detailPage.body.includes('dlv_')) throw new Error('the delivery log shows no delivery')

  // ---- the screens (services/portal-api/src/portal/index.ts) ----
  const firstList = await expect('contacts list', page(app, '/portal/contacts', cookie), 200)
  const cursor = /[?&]cursor=([^"&]+)/.exec(firstList.body)?.[1]
  if (!cursor) throw new Error('no next-page cursor on the contacts list')
  const later = `/portal/contacts?cursor=${cursor}`
  const contact = await deps.contacts.getByAnchor(accountId, 'crm', `c-${Math.floor(CONTACTS / 2)}`)
  const { readContact } = await import('../shared/src/domain/contacts/read.ts')
  const portalUrl = (await readContact(deps, accountId, contact!.id, undefined)).links.portal
  const screens: Array<[string, string, number]> = [
    ['control: GET /healthz', '/healthz', 200],
    ['connections', '/portal/connections', 200],
    ['a connection (3 keys)', `/portal/connections/${connectionId}`, 200],
    ['webhooks', '/portal/webhooks', 200],
    ['an integration + delivery log', `/portal/webhooks/${integrationId}`, 200],
    ['contacts, first page', '/portal/contacts', 200],
    ['contacts, a later page (cursor)', later, 200],
    ['lookup by email (303 to the page)', `/portal/contacts?email=p${CONTACTS - 7}%40example.com`, 303],
    ['lookup by source + external_id (303)', `/portal/contacts?source=crm&external_id=c-${CONTACTS - 3}`, 303],
    ['a contact at its links.portal URL', new URL(portalUrl).pathname, 200],
    ['settings', '/portal/settings', 200],
    ['activity', '/portal/activity', 200],
    ['audit', '/portal/audit', 200],
  ]
  const load = loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')
  console.log(
    `\n${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average ${load}; ${REQUESTS} requests per page after ${WARMUP} warm-up; node ${process.version}\n`,
  )
  console.log(
    `${'page'.padEnd(40)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'p50/ctrl'.padStart(9)} ${'p99/ctrl'.padStart(9)}   goal p99 < ${GOAL_MS} ms`,
  )
  let controlP50 = 1
  let controlP99 = 1
  let over = 0
  for (const [label, url, status] of screens) {
    for (let i = 0; i < WARMUP; i++) await expect(label, page(app, url, cookie), status)
    const times: number[] = []
    for (let i = 0; i < REQUESTS; i++) {
      const t0 = performance.now()
      const res = await page(app, url, cookie)
      times.push(performance.now() - t0)
      if (res.statusCode !== status) throw new Error(`${label} -> ${res.statusCode}`)
    }
    const p50 = quantile(times, 0.5)
    const p99 = quantile(times, 0.99)
    if (url === '/healthz') {
      controlP50 = p50
      controlP99 = p99
    }
    const isControl = url === '/healthz'
    if (!isControl && p99 >= GOAL_MS) over++
    console.log(
      `${label.padEnd(40)} ${p50.toFixed(1).padStart(8)} ${p99.toFixed(1).padStart(8)} ${(p50 / controlP50).toFixed(1).padStart(8)}x ${(p99 / controlP99).toFixed(1).padStart(8)}x   ${isControl ? '' : p99 < GOAL_MS ? 'met' : 'NOT MET'}`,
    )
  }
  console.log(over === 0 ? '\nevery screen under the goal' : `\n${over} screen(s) over the goal`)
  process.exitCode = over === 0 ? 0 : 1
} finally {
  await receiver.close()
  await fixture.close()
}
