import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createIngestFixture, type IngestFixture } from '../ingest/support/harness.ts'
import { drainDueTasks, startReceiver } from '../outbound/harness.ts'
import { listAudit } from '@lsv/shared/domain/audit/record.ts'
import { createDelivery, deliveryIdFor } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { sendTestEvent } from '@lsv/shared/domain/webhooks/test-event.ts'
import { generateSigningSecret } from '@lsv/shared/domain/webhooks/signing.ts'
import { consumeWebhookActionQuota, WEBHOOK_ACTION_WINDOWS } from '@lsv/shared/domain/webhooks/rate-limit.ts'
import type { DeliveryAttempt, DeliveryRecord } from '@lsv/shared/model/records.ts'
import { signIn } from './support.ts'
import { formPost, page } from './screens-support.ts'
import { followReveal, secretIn } from './reveal-support.ts'
import { TEST_OPERATOR_TOKEN } from '../helpers/test-secrets.ts'

const run = promisify(execFile)

/** The text of an element with this id on a page, unescaped as a browser shows it. */
function textOf(body: string, id: string): string {
  const m = new RegExp(`id="${id}">([\\s\\S]*?)</code>`).exec(body)
  expect(m, `#${id}`).not.toBeNull()
  return m![1]!
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
}

/**
 * The delivery debugger and recover through app.inject (docs/portal.md, "Delivery debugger"):
 * a failed delivery's attempts with the receiver's answer (headers bounded and redacted), the
 * exact signed request with a snippet that node runs to verify it, the log's status-code and
 * time filters, and recover (confirm, 303, result, audit, replay limit).
 */
describe('portal: the delivery debugger', () => {
  let fixture: IngestFixture
  let cookie: string
  let otherCookie: string
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let failing = true
  let integrationId: string
  let secret: string

  const newWebhook = async (query: string) => {
    const answer = await formPost(fixture.h.portal, '/portal/webhooks', cookie, { url: `${receiver.url}?${query}`, payload_version: '2' })
    const revealed = await followReveal(fixture.h.portal, answer, cookie)
    const id = /href="\/portal\/webhooks\/([^"#?/]+)"/.exec(revealed.body)![1]!
    return { id, secret: secretIn(revealed.body) }
  }

  beforeAll(async () => {
    fixture = await createIngestFixture()
    cookie = await signIn(fixture.h.portal, fixture.t.account.id)
    otherCookie = await signIn(fixture.h.portal, fixture.other.account.id)
    receiver = await startReceiver(() =>
      failing
        ? {
            status: 500,
            headers: { 'x-request-id': 'req-abc', 'set-cookie': 'sid=s3cr3t-cookie', 'x-long': 'v'.repeat(400) },
            body: '{"error":"database <down>"}',
          }
        : { status: 200, body: 'ok' },
    )
    ;({ id: integrationId, secret } = await newWebhook('dbg=1'))
  })
  afterAll(async () => {
    await receiver?.close()
    await fixture?.close()
  })

  it('shows each attempt (time, status, duration, redacted headers, excerpt) and the exact signed request; its snippet verifies in node', async () => {
    const delivery = await sendTestEvent(fixture.h.deps, fixture.t.account.id, integrationId)
    await drainDueTasks(fixture.h.deps)
    const got = receiver.requests.at(-1)!
    const path = `/portal/webhooks/${integrationId}/deliveries/${delivery.id}`
    // the log links to it
    expect((await page(fixture.h.portal, `/portal/webhooks/${integrationId}`, cookie)).body).toContain(`href="${path}"`)
    const res = await page(fixture.h.portal, path, cookie)
    expect(res.statusCode).toBe(200)
    const stored = (await fixture.h.deps.deliveries.get(delivery.id))!
    const attempt = stored.attempts[0]!
    // the time in the portal's one format: ISO in datetime, the exact UTC text as its title (kit/time.ts)
    expect(res.body).toContain(`<time class="ago" datetime="${attempt.at}" title="${attempt.at.slice(0, 19).replace('T', ' ')} UTC">`)
    expect(res.body).toContain('HTTP <strong>500</strong>')
    expect(res.body).toContain(`${attempt.latency_ms} ms`)
    // mutation: storing response_headers: null in deliver.ts removes these lines
    expect(res.body).toContain('x-request-id: req-abc')
    // mutation: dropping the SECRET_NAME test in response-headers.ts shows the cookie
    expect(res.body).toContain('set-cookie: [redacted]')
    expect(res.body).not.toContain('s3cr3t-cookie')
    // a value cut to 256 bytes
    expect(res.body).toContain(`x-long: ${'v'.repeat(256)}…`)
    expect(res.body).not.toContain('v'.repeat(257))
    // the excerpt, escaped once
    expect(res.body).toContain('{&quot;error&quot;:&quot;database &lt;down&gt;&quot;}')
    // never the secret
    expect(res.body).not.toContain(secret)
    // the management API lists the same stored, redacted headers (its schema used to drop them silently)
    // mutation: removing response_headers from routes/admin/deliveries.ts's Attempt drops them here
    const listed = await fixture.h.portal.inject({
      url: `/api/v1/admin/accounts/${fixture.t.account.id}/integrations/${integrationId}/deliveries?event_id=${delivery.event_id}`,
      headers: { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` },
    })
    expect(listed.statusCode).toBe(200)
    const apiHeaders = (listed.json() as { data: Array<{ attempts: Array<{ response_headers?: Record<string, string> }> }> }).data[0]!.attempts[0]!
      .response_headers
    expect(apiHeaders).toMatchObject({ 'x-request-id': 'req-abc', 'set-cookie': '[redacted]' })

    // the request shown is the one the receiver got, header for header and byte for byte
    const headers = textOf(res.body, 'signed-headers')
    // mutation: signing with the current time instead of the attempt's `at` changes the timestamp
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) expect(headers).toContain(`${name}: ${got.headers[name]}`)
    expect(textOf(res.body, 'signed-body')).toBe(got.body)

    // the snippet, run by node with the real secret, verifies; with another secret it does not
    const dir = await mkdtemp(join(tmpdir(), 'verify-'))
    try {
      const file = join(dir, 'verify.mjs')
      await writeFile(file, textOf(res.body, 'verify-snippet'))
      const ok = await run(process.execPath, [file], { env: { WEBHOOK_SECRET: secret } })
      expect(ok.stdout.trim()).toBe('verified')
      // mutation: a wrong secret must fail (exit 1), or the snippet proves nothing
      const bad = await run(process.execPath, [file], { env: { WEBHOOK_SECRET: generateSigningSecret() } }).catch((e: { code: number; stdout: string }) => e)
      expect(bad).toMatchObject({ code: 1, stdout: 'NOT verified\n' })
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it("shows the delivery's trace id when the record carries one (none on a record without)", async () => {
    const d = await sendTestEvent(fixture.h.deps, fixture.t.account.id, integrationId)
    const path = `/portal/webhooks/${integrationId}/deliveries/${d.id}`
    const trace = '0af7651916cd43dd8448eb211c80319c'
    const { trace_id: _t, ...without } = d as DeliveryRecord & { trace_id?: unknown }
    await fixture.h.deps.deliveries.put(without as DeliveryRecord)
    expect((await page(fixture.h.portal, path, cookie)).body).not.toContain('<dt>Trace id</dt>')
    await fixture.h.deps.deliveries.put({ ...d, trace_id: trace } as DeliveryRecord)
    // mutation: traceIdOf answering null hides it
    expect((await page(fixture.h.portal, path, cookie)).body).toContain(`<dt>Trace id</dt><dd><code>${trace}</code></dd>`)
  })

  it("another account's session gets 404 for the delivery page and for recover", async () => {
    const d = await sendTestEvent(fixture.h.deps, fixture.t.account.id, integrationId)
    expect((await page(fixture.h.portal, `/portal/webhooks/${integrationId}/deliveries/${d.id}`, otherCookie)).statusCode).toBe(404)
    expect((await page(fixture.h.portal, `/portal/webhooks/${integrationId}/deliveries/dlv_missing`, cookie)).statusCode).toBe(404)
    expect((await page(fixture.h.portal, `/portal/webhooks/${integrationId}/recover?since=2026-01-01T00:00`, otherCookie)).statusCode).toBe(404)
    expect((await formPost(fixture.h.portal, `/portal/webhooks/${integrationId}/recover`, otherCookie, { since: '2026-01-01T00:00' })).statusCode).toBe(404)
  })

  describe('filters and recover', () => {
    let logId: string
    const base = Date.parse('2026-03-01T10:00:00.000Z')
    const at = (minutes: number) => new Date(base + minutes * 60_000).toISOString()
    const attempt = (code: number | null): DeliveryAttempt => ({
      attempt: 1,
      at: at(0),
      status_code: code,
      error: code === null ? 'timeout' : null,
      latency_ms: 5,
      response_excerpt: null,
    })
    /** a delivery created `minutes` after base, stored with this outcome */
    const stored = async (eventId: string, minutes: number, status: DeliveryRecord['status'], code: number | null | undefined) => {
      const d = await createDelivery(fixture.h.deps, {
        accountId: fixture.t.account.id,
        integrationId: logId,
        eventId,
        body: `{"id":"${eventId}"}`,
        now: at(minutes),
      })
      await fixture.h.deps.deliveries.put({ ...d, status, next_attempt_at: null, attempts: code === undefined ? [] : [attempt(code)] })
    }
    const idsOf = async (query: string) => {
      const res = await page(fixture.h.portal, `/portal/webhooks/${logId}${query}`, cookie)
      expect(res.statusCode, res.body).toBe(200)
      const section = res.body.slice(res.body.indexOf('id="deliveries"'))
      return [...section.matchAll(/<tr>\n<td[^>]*><code[^>]*>([^<]+)<\/code>/g)].map((m) => m[1]!)
    }

    beforeAll(async () => {
      ;({ id: logId } = await newWebhook('log=1'))
      await stored('evt_a_500', 1, 'failed', 500)
      await stored('evt_b_404', 2, 'failed', 404)
      await stored('evt_c_200', 3, 'succeeded', 200)
      await stored('evt_d_none', 4, 'failed', null)
      await stored('evt_e_503', 5, 'failed', 503)
      await drainDueTasks(fixture.h.deps)
    })

    it('filters by the HTTP status of the last attempt: a class, an exact code, no answer', async () => {
      // mutation: codeMatches comparing the first digit wrongly (or ignoring the filter) fails these
      expect(await idsOf('?code=5xx')).toEqual(['evt_e_503', 'evt_a_500'])
      expect(await idsOf('?code=4xx')).toEqual(['evt_b_404'])
      expect(await idsOf('?code=404')).toEqual(['evt_b_404'])
      expect(await idsOf('?code=none')).toEqual(['evt_d_none'])
      expect(await idsOf('?code=2xx&status=succeeded')).toEqual(['evt_c_200'])
      expect(await idsOf('?code=')).toHaveLength(5)
      // bounded input: anything else is refused
      for (const q of ['?code=6xx', '?code=40', '?code=%3Cb%3E', '?from=yesterday', '?to=2026-03-01T10:00:00+02:00'])
        expect((await page(fixture.h.portal, `/portal/webhooks/${logId}${q}`, cookie)).statusCode, q).toBe(400)
      expect((await page(fixture.h.portal, `/portal/webhooks/${logId}?from=2026-13-45T10:00`, cookie)).statusCode).toBe(400)
      const form = (await page(fixture.h.portal, `/portal/webhooks/${logId}?code=404`, cookie)).body
      // an exact code the select does not list is kept as an option
      expect(form).toContain('<option value="404" selected>exactly 404</option>')
    })

    it('filters by a time range (UTC inputs, from inclusive, before exclusive) with the other filters and the pager', async () => {
      expect(await idsOf('?from=2026-03-01T10:02&to=2026-03-01T10:04')).toEqual(['evt_c_200', 'evt_b_404'])
      // mutation: dropping `from` in listDeliveryLog's store call lists all five here
      expect(await idsOf('?from=2026-03-01T10:04:00Z')).toEqual(['evt_e_503', 'evt_d_none'])
      expect(await idsOf('?to=2026-03-01T10:02&code=5xx')).toEqual(['evt_a_500'])
      const res = await page(fixture.h.portal, `/portal/webhooks/${logId}?from=2026-03-01T10:02&code=none&status=succeeded`, cookie)
      expect(res.body).toContain('No deliveries with status succeeded, without an HTTP answer, since 2026-03-01 10:02:00 UTC.')
      // the form shows the range in force
      expect(res.body).toContain('id="from" name="from" step="1" value="2026-03-01T10:02:00"')
    })

    it('recover: a confirmation page, then a 303 to a result page; failed ones since the time are sent again, oldest first, audited', async () => {
      failing = false
      const n = receiver.requests.length
      const confirm = await page(fixture.h.portal, `/portal/webhooks/${logId}/recover?since=2026-03-01T10:02`, cookie)
      expect(confirm.statusCode).toBe(200)
      // 404 (10:02), none (10:04), 503 (10:05): not the 500 before the time, not the succeeded one
      expect(confirm.body).toContain('Replay 3 failed deliveries?')
      expect(confirm.body).toContain('At most 1000 failed deliveries per recover')
      // the GET sends nothing
      await drainDueTasks(fixture.h.deps)
      expect(receiver.requests.length).toBe(n)

      const posted = await formPost(fixture.h.portal, `/portal/webhooks/${logId}/recover`, cookie, { since: '2026-03-01T10:02:00.000Z' })
      expect(posted.statusCode).toBe(303)
      const location = posted.headers.location as string
      expect(location).toBe(`/portal/webhooks/${logId}/recover/result?since=2026-03-01T10%3A02%3A00.000Z&found=3&replayed=3`)
      await drainDueTasks(fixture.h.deps)
      // mutation: planRecover without `.reverse()` sends them newest first
      expect(receiver.requests.slice(n).map((r) => JSON.parse(r.body).id)).toEqual(['evt_b_404', 'evt_d_none', 'evt_e_503'])
      const result = await page(fixture.h.portal, location, cookie)
      expect(result.body).toContain('3 deliveries queued again')
      // the live progress: the three now succeeded next to the one that succeeded before
      expect(result.body).toMatch(/<dt>Succeeded<\/dt><dd>4<\/dd>/)
      expect(result.body).toMatch(/<dt>Failed<\/dt><dd>0<\/dd>/)
      const entry = (await listAudit(fixture.h.deps, fixture.t.account.id, { limit: 20 })).data.find((e) => e.action === 'delivery.recovered')!
      expect(entry).toMatchObject({ target: { integration_id: logId }, details: { since: '2026-03-01T10:02:00.000Z', found: 3, replayed: 3 } })
      // a second recover from the same time finds nothing: nothing is sent twice
      expect((await page(fixture.h.portal, `/portal/webhooks/${logId}/recover?since=2026-03-01T10:02`, cookie)).body).toContain(
        'Nothing failed since that time',
      )
      // the evt_a_500 before the time stays failed
      expect((await fixture.h.deps.deliveries.get(deliveryIdFor('evt_a_500', logId)))!.status).toBe('failed')
    })

    it('recover counts in the replay limit: once it is spent the rest stay failed and the result says when to go on', async () => {
      // a fixed window of a minute: start well inside one so the spending below and the recover share it
      const left = 60_000 - (Date.now() % 60_000)
      if (left < 5000) await new Promise((r) => setTimeout(r, left + 100))
      for (let i = 0; i < WEBHOOK_ACTION_WINDOWS.replay.limit + 1; i++) {
        const spent = await consumeWebhookActionQuota(fixture.h.deps, 'replay', fixture.t.account.id).then(
          () => false,
          () => true,
        )
        if (spent) break
      }
      const posted = await formPost(fixture.h.portal, `/portal/webhooks/${logId}/recover`, cookie, { since: '2026-03-01T09:00' })
      expect(posted.statusCode).toBe(303)
      // mutation: replaying without consumeWebhookActionQuota answers replayed=1 here
      expect(posted.headers.location).toMatch(/found=1&replayed=0&retry_after=\d+$/)
      const result = await page(fixture.h.portal, posted.headers.location as string, cookie)
      expect(result.body).toContain('The replay limit (60 a minute) held back 1 delivery.')
      expect((await fixture.h.deps.deliveries.get(deliveryIdFor('evt_a_500', logId)))!.status).toBe('failed')
    })

    it('recover is refused while the webhook is disabled, and a POST needs the same origin', async () => {
      expect(
        (await formPost(fixture.h.portal, `/portal/webhooks/${logId}/recover`, cookie, { since: '2026-03-01T09:00' }, 'https://evil.example')).statusCode,
      ).toBe(403)
      await fixture.h.deps.tenants.updateIntegration(logId, { active: false, disabled_reason: 'endpoint answered 410' })
      const res = await formPost(fixture.h.portal, `/portal/webhooks/${logId}/recover`, cookie, { since: '2026-03-01T09:00' })
      expect(res.statusCode).toBe(409)
      expect(res.body).toContain('re-enable it before recovering')
      expect((await formPost(fixture.h.portal, `/portal/webhooks/${logId}/recover`, cookie, { since: '' })).statusCode).toBe(400)
    })
  })
})
