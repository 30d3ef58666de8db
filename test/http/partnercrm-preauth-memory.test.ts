import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fork, type ChildProcess } from 'node:child_process'
import { request } from 'node:http'
import { fileURLToPath } from 'node:url'
import { PRE_AUTH_LIMITS } from '@lsv/shared/domain/ingest/preauth-budget.ts'
import { firstResponse, rawConnect, within, type RawConnection } from './support/raw.ts'
import { askChild } from './support/ask-child.ts'

/**
 * Issue 12, item 9, the reported case: 8 concurrent anonymous partner CRM bodies of 8 MiB each
 * (POST /v1/contacts/partnercrm on the edge, no token) against the edge listening on loopback,
 * with the production pre-authentication budget (domain/ingest/preauth-budget.ts: 32 MiB per
 * instance, 8 MiB per account). The edge runs in a child process (support/preauth-edge-child.ts)
 * so its memory is measured alone.
 *
 * Asserted: every call is answered 202 (admitted within the budget) or 503 (refused at once),
 * and some are refused; the budget never held more than the production bounds (PRE_AUTH_LIMITS,
 * stated here, not read back from the child); the edge's RSS grew by less than RSS_GROWTH_BOUND
 * over the load; /healthz answered 200 throughout, each check within a generous 10 s.
 *
 * What fails without the budget is the accounting: with the budget lifted (measured once, by
 * hand) all 8 bodies are admitted and 64 MiB are held at once. The RSS bound is a ceiling, not
 * the discriminator: measured on this 2-core machine (Node 24), the peak growth was 76-97 MiB
 * with the budget (most of it bodies refused and drained, JSON parsing and the embedded queue's
 * writes, all transient) and 117-218 MiB without it, so 160 MiB leaves room for noise and still
 * catches an edge that keeps bodies or buffers far more than the budget admits. The health
 * checks took up to about 2.5 s under this load (parsing and storing 8 MiB bodies block the event
 * loop for that long); they are reported, not held to a tight limit.
 */
const MiB = 1024 * 1024
const BODY_BYTES = 8 * MiB
const CONCURRENT = 8
const RSS_GROWTH_BOUND = 160 * MiB
const HEALTH_LIMIT_MS = 10_000

interface Tenant {
  host: string
  locationId: string
  accountId: string
}
interface Report {
  baseline: number
  rssPeak: number
  budgetPeak: number
  budgetInUse: number
}

const CHILD = fileURLToPath(new URL('./support/preauth-edge-child.ts', import.meta.url))

describe('partner CRM: 8 concurrent anonymous 8 MiB bodies (issue 12, item 9)', () => {
  let child: ChildProcess
  let port = 0
  let tenants: Tenant[] = []
  const open: RawConnection[] = []

  const ask = <T>(type: string, answer: string): Promise<T> => askChild<T>(child, type, answer)

  beforeAll(async () => {
    child = fork(CHILD, [], {
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, PREAUTH_CHILD_TENANTS: String(CONCURRENT) },
    })
    const ready = await new Promise<{ port: number; tenants: Tenant[] }>((resolve, reject) => {
      child.once('message', (m: { type: string; port: number; tenants: Tenant[] }) =>
        m.type === 'ready' ? resolve(m) : reject(new Error(`unexpected ${m.type}`)),
      )
      child.once('exit', (code) => reject(new Error(`the edge process exited (${code}) before it was ready`)))
    })
    port = ready.port
    tenants = ready.tenants
  }, 60_000)

  afterAll(async () => {
    for (const c of open) c.socket.destroy()
    if (child?.connected) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.send({ type: 'close' })
      await within(exited, 15_000, null)
    }
    if (child && child.exitCode === null) child.kill('SIGKILL')
  })

  /** a whole 8 MiB partner CRM body naming the tenant's location, sent without a token; resolves with the answer */
  async function anonymousPush(t: Tenant, n: number): Promise<number> {
    const body = Buffer.alloc(BODY_BYTES, ' ')
    Buffer.from(`{"contactId":"c-${n}","locationId":"${t.locationId}","notes":"`).copy(body)
    body.write('"}', BODY_BYTES - 2)
    const c = await rawConnect(port)
    open.push(c)
    void c.write(`POST /v1/contacts/partnercrm HTTP/1.1\r\nHost: ${t.host}\r\nContent-Type: application/json\r\nContent-Length: ${BODY_BYTES}\r\n\r\n`)
    void c.write(body)
    for (let i = 0; i < 2400 && firstResponse(c.received()) === null && !c.socket.destroyed; i++) await new Promise((r) => setTimeout(r, 25))
    const answer = firstResponse(c.received())
    c.socket.destroy()
    return answer?.status ?? 0
  }

  function healthz(): Promise<{ status: number; ms: number }> {
    const started = performance.now()
    return new Promise((resolve) => {
      request({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => {
        res.resume()
        res.on('end', () => resolve({ status: res.statusCode!, ms: performance.now() - started }))
      })
        .on('error', () => resolve({ status: 0, ms: performance.now() - started }))
        .end()
    })
  }

  /** runs the pushes while /healthz is asked every 100 ms; returns the answers and the health checks */
  async function load(targets: Tenant[]) {
    await ask('mark', 'marked')
    const checks: Array<{ status: number; ms: number }> = []
    let done = false
    const poller = (async () => {
      while (!done) {
        checks.push(await healthz())
        await new Promise((r) => setTimeout(r, 100))
      }
    })()
    const statuses = await Promise.all(targets.map((t, i) => anonymousPush(t, i)))
    done = true
    await poller
    checks.push(await healthz())
    // a lease is released when its answer has been sent (the socket's close): ask until it has
    let report = await ask<Report>('report', 'report')
    for (let i = 0; i < 100 && report.budgetInUse !== 0; i++) {
      await new Promise((r) => setTimeout(r, 50))
      report = await ask<Report>('report', 'report')
    }
    console.log(
      `[preauth memory] ${targets.length} bodies: ${statuses.join(' ')}; budget peak ${(report.budgetPeak / MiB).toFixed(0)} MiB; RSS growth ${((report.rssPeak - report.baseline) / MiB).toFixed(0)} MiB; ${checks.length} health checks, slowest ${Math.max(...checks.map((c) => c.ms)).toFixed(0)} ms`,
    )
    return { statuses, checks, report }
  }

  function expectHealthy(checks: Array<{ status: number; ms: number }>) {
    expect(checks.length).toBeGreaterThan(1)
    const sorted = checks.map((c) => c.ms).sort((x, y) => x - y)
    const p90 = sorted[Math.floor(sorted.length * 0.9)]!
    for (const c of checks) {
      expect(c.status, `health checks: ${JSON.stringify(checks)}`).toBe(200)
      expect(c.ms, `a health check took ${c.ms.toFixed(0)} ms (p90 ${p90.toFixed(0)} ms)`).toBeLessThan(HEALTH_LIMIT_MS)
    }
  }

  it('on one account (the reported case): one body admitted at a time, the rest 503 at once, memory and health bounded', async () => {
    const { statuses, checks, report } = await load(Array.from({ length: CONCURRENT }, () => tenants[0]!))
    for (const s of statuses) expect([202, 503], `answers: ${statuses}`).toContain(s)
    expect(statuses.filter((s) => s === 202).length).toBeGreaterThanOrEqual(1)
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(1)
    // what anonymous callers of one account can make the edge buffer: one full-size body
    expect(report.budgetPeak).toBeLessThanOrEqual(PRE_AUTH_LIMITS.accountBytes)
    expect(report.budgetInUse).toBe(0)
    const growth = report.rssPeak - report.baseline
    expect(growth, `RSS grew by ${(growth / MiB).toFixed(0)} MiB`).toBeLessThan(RSS_GROWTH_BOUND)
    expectHealthy(checks)
  }, 120_000)

  it('spread over 8 accounts: the instance budget holds (32 MiB), memory and health bounded', async () => {
    const { statuses, checks, report } = await load(tenants.slice(0, CONCURRENT))
    for (const s of statuses) expect([202, 503], `answers: ${statuses}`).toContain(s)
    expect(statuses.filter((s) => s === 202).length).toBeGreaterThanOrEqual(1)
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(1)
    expect(report.budgetPeak).toBeLessThanOrEqual(PRE_AUTH_LIMITS.instanceBytes)
    expect(report.budgetInUse).toBe(0)
    const growth = report.rssPeak - report.baseline
    expect(growth, `RSS grew by ${(growth / MiB).toFixed(0)} MiB`).toBeLessThan(RSS_GROWTH_BOUND)
    expectHealthy(checks)
  }, 120_000)
})
