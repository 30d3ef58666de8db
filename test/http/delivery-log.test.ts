import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Writable } from 'node:stream'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { createLogger } from '@lsv/shared/logging/logger.ts'
import { createDelivery } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { RETRY_ANCHORS_MS } from '@lsv/shared/domain/webhooks/schedule.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { drainDueTasks, startReceiver, type Answer } from '../outbound/harness.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

/**
 * Webhook delivery attempts in the logs (docs/operations.md, "Logs"): each attempt writes exactly
 * one line, whatever its outcome (delivered, failed with a retry scheduled, given up, integration
 * disabled by a 410), with the ids, attempt and status; never the endpoint URL (which may carry the
 * receiver's credentials), a signing secret or a body.
 */
type Line = Record<string, unknown> & { message: string; deliveryId?: string }

describe('webhook delivery attempts are logged', () => {
  const raw: string[] = []
  const lines: Line[] = []
  const sink = new Writable({
    write(chunk: Buffer, _e, callback) {
      for (const text of chunk.toString().split('\n').filter(Boolean)) {
        raw.push(text)
        lines.push(JSON.parse(text) as Line)
      }
      callback()
    },
  })
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  const clock = new ManualClock(Date.UTC(2026, 8, 4, 9, 0, 0))
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let script: (n: number) => Answer = () => ({ status: 200 })
  const tenants: StoredTenant[] = []
  const RECEIVER_SECRET = 'receiver-own-secret-in-url'
  const BODY_MARK = 'body-content-never-logged'

  beforeAll(async () => {
    deps = await createTestDeps({ clock })
    deps.logger = createLogger('info', 'webhook-dispatcher', sink)
    receiver = await startReceiver((_r, n) => script(n))
  })
  afterAll(async () => {
    for (const t of tenants) await t.cleanup()
    await receiver.close()
    await deps.cleanup()
  })

  async function newDelivery() {
    const t = await createTestTenant(deps, { ...ACCOUNT_ONLY, integration: { url: `${receiver.url}?key=${RECEIVER_SECRET}` } })
    tenants.push(t)
    const eventId = `evt_${Math.random().toString(36).slice(2)}`
    const body = JSON.stringify({ id: eventId, event: 'visitor.identified', mark: BODY_MARK })
    const delivery = await createDelivery(deps, {
      accountId: t.account.id,
      integrationId: t.integration.id,
      eventId,
      body,
      now: new Date(clock.now()).toISOString(),
    })
    return { ...t, delivery, eventId }
  }
  const linesOf = (deliveryId: string) => lines.filter((l) => l.deliveryId === deliveryId)
  const noSecrets = (t: { integration: { signing_secrets: Array<{ secret: string }> } }) => {
    for (const text of raw) {
      expect(text).not.toContain(RECEIVER_SECRET)
      expect(text).not.toContain(BODY_MARK)
      expect(text).not.toContain(receiver.url)
      for (const s of t.integration.signing_secrets) expect(text).not.toContain(s.secret)
    }
  }

  it('delivered: one info line with ids, attempt and status', async () => {
    script = () => ({ status: 200 })
    const t = await newDelivery()
    await drainDueTasks(deps)
    const mine = linesOf(t.delivery.id)
    expect(mine).toHaveLength(1)
    expect(mine[0]).toMatchObject({
      severity: 'INFO',
      message: 'webhook delivered',
      event: 'webhook_delivery',
      outcome: 'succeeded',
      integrationId: t.integration.id,
      accountId: t.account.id,
      eventId: t.eventId,
      attempt: 1,
      statusCode: 200,
      error: null,
    })
    noSecrets(t)
  })

  it('failing: one warning per failed attempt with the next attempt, then one error line when giving up', async () => {
    script = () => ({ status: 503, body: BODY_MARK })
    const t = await newDelivery()
    await drainDueTasks(deps)
    for (let attempt = 2; attempt <= RETRY_ANCHORS_MS.length; attempt++) {
      clock.advance(RETRY_ANCHORS_MS[attempt - 1]!)
      await drainDueTasks(deps)
    }
    const mine = linesOf(t.delivery.id)
    expect(receiver.requests.length).toBeGreaterThanOrEqual(RETRY_ANCHORS_MS.length)
    expect(mine).toHaveLength(RETRY_ANCHORS_MS.length)
    mine.slice(0, -1).forEach((line, i) => {
      expect(line).toMatchObject({
        severity: 'WARNING',
        message: 'webhook delivery failed: retry scheduled',
        outcome: 'retrying',
        attempt: i + 1,
        statusCode: 503,
      })
      expect(Date.parse(line.nextAttemptAt as string)).toBeGreaterThan(0)
    })
    expect(mine.at(-1)).toMatchObject({
      severity: 'ERROR',
      message: 'webhook delivery failed: giving up',
      outcome: 'failed',
      attempt: RETRY_ANCHORS_MS.length,
      statusCode: 503,
    })
    noSecrets(t)
  })

  it('410: one line saying the integration was disabled; a transport error is logged with its reason', async () => {
    script = () => ({ status: 410 })
    const gone = await newDelivery()
    await drainDueTasks(deps)
    expect(linesOf(gone.delivery.id)).toEqual([expect.objectContaining({ severity: 'WARNING', outcome: 'disabled', statusCode: 410, attempt: 1 })])

    const unreachable = await createTestTenant(deps, { ...ACCOUNT_ONLY, integration: { url: 'http://127.0.0.1:9/unreachable' } })
    tenants.push(unreachable)
    const delivery = await createDelivery(deps, {
      accountId: unreachable.account.id,
      integrationId: unreachable.integration.id,
      eventId: 'evt_unreachable',
      body: '{}',
      now: new Date(clock.now()).toISOString(),
    })
    await drainDueTasks(deps)
    const [line] = linesOf(delivery.id)
    expect(line).toMatchObject({ outcome: 'retrying', statusCode: null, error: expect.any(String) })
    expect(line!.error).not.toBe('')
    noSecrets(gone)
  })
})
