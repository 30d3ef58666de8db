import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { startReceiver } from '../outbound/harness.ts'
import { eventually, launchChromium, screenshots, sidewaysScroll, sharedStack, type LocalStack, signInPage, allViolations } from './support.ts'

const run = promisify(execFile)

/**
 * Issue 22, job 4 ("Debug a delivery") in Debian's Chromium against `npm start`'s stack: an
 * endpoint answers 410 to a test event (the delivery fails, the webhook is disabled); the tenant
 * filters the log to 4xx, opens the delivery, reads the attempt (status, headers, excerpt, time in
 * their zone), copies the verify snippet and node runs it with the secret; then re-enables the
 * endpoint and recovers every failed delivery since an hour ago (confirm, result page, the
 * receiver gets it again). 0 axe violations in light and dark mode on the delivery, confirm and
 * result pages; no sideways scroll at 390 px. Screenshots: .tmp/screenshots/delivery-debugger-*.
 */
describe('the portal in Chromium: the delivery debugger', { timeout: 180_000 }, () => {
  let stack: LocalStack
  let chromium: Awaited<ReturnType<typeof launchChromium>>
  let page: Page
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let healthy = false
  let secret: string
  let webhookUrl: string

  const checkScreen = async (name: string) => {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      expect(await allViolations(page), `axe, ${scheme}, ${name}`).toEqual([])
      await screenshots(page, `${name}-${scheme}`)
    }
    await page.emulateMedia({ colorScheme: 'light' })
    const narrow = await sidewaysScroll(page, 390)
    expect(narrow.scrollWidth, `${name} at 390 px: ${narrow.sticksOut.join(', ')}`).toBeLessThanOrEqual(narrow.clientWidth)
  }

  beforeAll(async () => {
    chromium = await launchChromium()
    ;[stack, receiver] = await Promise.all([
      sharedStack(),
      startReceiver(() =>
        healthy
          ? { status: 200, body: 'ok' }
          : { status: 410, headers: { 'x-request-id': 'req-browser', 'set-cookie': 'sid=do-not-show' }, body: '{"error":"endpoint removed"}' },
      ),
    ])
    await chromium.context.grantPermissions(['clipboard-read', 'clipboard-write'])
    page = chromium.context.pages()[0] ?? (await chromium.context.newPage())
    await signInPage(page, stack)
  }, 120_000)
  afterAll(async () => {
    await chromium?.close()
    await receiver?.close()
    await stack?.stop()
  })

  it('a failed delivery: filter the log to 4xx, open it, read the attempt, copy the snippet that verifies it', async () => {
    await page.goto(`${stack.portal}/portal/webhooks`)
    await page.getByLabel('Endpoint URL').fill(receiver.url)
    await page.getByRole('button', { name: 'Add webhook' }).click()
    await page.waitForURL(/\/portal\/reveal\//)
    secret = (await page.locator('.secret code').first().textContent())!.trim()
    expect(secret).toMatch(/^whsec_/)
    await page.goto(`${stack.portal}/portal/webhooks`)
    await page.getByRole('link', { name: receiver.url }).first().click()
    webhookUrl = page.url().replace(/[?#].*$/, '')
    await page.getByRole('button', { name: 'Send test event' }).click()
    await page.waitForURL(/flash=test-sent/)
    await eventually('the 410 to be recorded', async () => {
      await page.goto(webhookUrl)
      return (await page.locator('#disabled').count()) ? true : undefined
    })

    // filter: 4xx finds it, 5xx does not
    await page.getByLabel('HTTP status').selectOption('5xx')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/code=5xx/)
    expect(await page.locator('#deliveries tbody tr').count()).toBe(0)
    await page.getByLabel('HTTP status').selectOption('4xx')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/code=4xx/)
    const rows = page.locator('#deliveries tbody tr')
    expect(await rows.count()).toBe(1)
    const eventId = (await rows.first().locator('code').first().textContent())!
    expect(eventId).toMatch(/^evt_test_/)
    // the log with the new filters in force (HTTP status, time range) and the recover form
    await checkScreen('delivery-debugger-log-filtered')

    await page.getByRole('link', { name: `Debug the delivery of ${eventId}` }).click()
    await page.waitForURL(/\/deliveries\/dlv_/)
    const attempt = page.locator('section.card').first()
    expect(await attempt.textContent()).toContain('HTTP 410')
    expect(await attempt.textContent()).toContain('x-request-id: req-browser')
    expect(await attempt.textContent()).toContain('set-cookie: [redacted]')
    expect(await page.content()).not.toContain('do-not-show')
    // the time reads relative (server-side, kit/time.ts), the exact UTC text its title and hidden text
    const time = attempt.locator('time.ago').first()
    expect(await time.getAttribute('title')).toMatch(/ UTC$/)
    expect(await time.textContent()).toMatch(/^(just now|\d+ (min|h|days?) ago) \(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC\)$/)
    await checkScreen('delivery-debugger')

    // the snippet through the Copy button, run by node with the secret the tenant copied
    await page.getByRole('button', { name: 'Copy snippet' }).click()
    const snippet = await page.evaluate(() => navigator.clipboard.readText())
    expect(snippet).toContain("from 'node:crypto'")
    expect(snippet).not.toContain(secret)
    const dir = await mkdtemp(join(tmpdir(), 'verify-'))
    try {
      const file = join(dir, 'verify.mjs')
      await writeFile(file, snippet)
      expect((await run(process.execPath, [file], { env: { WEBHOOK_SECRET: secret } })).stdout.trim()).toBe('verified')
      // the same request with another secret does not verify
      const other = `whsec_${Buffer.alloc(32, 7).toString('base64')}`
      expect(await run(process.execPath, [file], { env: { WEBHOOK_SECRET: other } }).catch((e: { code: number }) => e)).toMatchObject({ code: 1 })
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
    // and it is the request the receiver got
    expect(await page.locator('#signed-body').textContent()).toBe(receiver.requests[0]!.body)
  })

  it('recover: re-enable, pick a time, confirm, and the failed delivery is sent again', async () => {
    healthy = true
    await page.goto(webhookUrl)
    await page.getByRole('button', { name: 'Re-enable' }).click()
    await page.waitForURL(/flash=integration-updated/)
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString().slice(0, 19)
    await page.getByLabel('Failed since (UTC)').fill(hourAgo)
    await page.getByRole('button', { name: 'Review what would be sent' }).click()
    await page.waitForURL(/\/recover\?since=/)
    expect(await page.getByRole('heading', { level: 2, name: 'Replay 1 failed delivery?' }).count()).toBe(1)
    await checkScreen('delivery-debugger-recover-confirm')
    // the confirmation page sent nothing
    expect(receiver.requests).toHaveLength(1)
    await page.getByRole('button', { name: 'Replay 1 failed delivery' }).click()
    await page.waitForURL(/\/recover\/result\?/)
    expect(await page.getByRole('heading', { level: 2, name: '1 delivery queued again' }).count()).toBe(1)
    await eventually('the recovered delivery to arrive', async () => (receiver.requests.length === 2 ? true : undefined))
    expect(receiver.requests[1]!.body).toBe(receiver.requests[0]!.body)
    await eventually('the progress to show it succeeded', async () => {
      await page.reload()
      const figure = await page.locator('#recover-progress dl.stats div').filter({ hasText: 'Succeeded' }).locator('dd').textContent()
      return figure === '1' ? true : undefined
    })
    await checkScreen('delivery-debugger-recover-result')
  })
})
