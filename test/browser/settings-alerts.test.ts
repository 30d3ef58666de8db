import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { Webhook } from 'standardwebhooks'
import { startReceiver } from '../outbound/harness.ts'
import { allViolations, eventually, sharedChromium, screenshots, signInPage, sharedStack, type LocalStack } from './support.ts'

/**
 * Settings, "Alerts" (issue 29), in Debian's Chromium against `npm start`'s stack: the tenant types
 * an email address and an alert webhook URL (a receiver on 127.0.0.1), saves, copies the alert
 * secret from its one-time page, and sends a test alert: the receiver gets one POST that verifies
 * with that secret, and the stack's mail folder one email to the address. axe: 0 violations in
 * light and dark. Screenshots: .tmp/screenshots/settings-alerts-*.
 */
describe('the portal in Chromium: alerts outside the portal', { timeout: 180_000 }, () => {
  let stack: LocalStack
  let chromium: Awaited<ReturnType<typeof sharedChromium>>
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let page: Page
  // the shared stack's mail folder holds every file's alerts: this account's address is its own
  const address = `oncall-${randomBytes(4).toString('hex')}@example.com`

  beforeAll(async () => {
    chromium = await sharedChromium()
    ;[stack, receiver] = await Promise.all([sharedStack(), startReceiver()])
    page = chromium.context.pages()[0] ?? (await chromium.context.newPage())
    await signInPage(page, stack)
  }, 120_000)
  afterAll(async () => {
    await chromium?.close()
    await receiver?.close()
    await stack?.stop()
  })

  it('sets an email and an alert webhook, keeps the secret shown once, and a test alert reaches both', async () => {
    await page.goto(`${stack.portal}/portal/settings`)
    await page.getByLabel('Email address').fill(address)
    await page.getByLabel('Alert webhook URL').fill(receiver.url)
    await page.getByRole('button', { name: 'Save alerts' }).click()
    await page.waitForURL(/\/portal\/reveal\//)
    const secret = (await page.locator('.secret code').textContent())!.trim()
    expect(secret).toMatch(/^whsec_/)
    await screenshots(page, 'settings-alerts-secret')

    await page.goto(`${stack.portal}/portal/settings#alerts`)
    expect(await page.getByLabel('Email address').inputValue()).toBe(address)
    expect(await page.getByLabel('Alert webhook URL').inputValue()).toBe(receiver.url)
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      expect(await allViolations(page), `axe, ${scheme}`).toEqual([])
    }
    await page.emulateMedia({ colorScheme: 'light' })

    await page.getByRole('button', { name: 'Send a test alert' }).click()
    await page.waitForURL(/flash=alert-test-sent/)
    expect(await page.locator('.flash').textContent()).toContain('Test alert sent.')
    await screenshots(page, 'settings-alerts')

    // the alert webhook: one POST (the dispatcher's task runner), verified with the secret shown once
    const posted = await eventually('the test alert POST', async () => receiver.requests[0])
    const alert = new Webhook(secret).verify(posted.body, posted.headers as Record<string, string>) as { type: string; test: boolean }
    expect(alert).toMatchObject({ type: 'endpoint.failing', test: true })
    // the email: a file in the stack's mail folder
    const dir = join(stack.dataDir, 'alert-mail')
    const mail = await eventually('the test alert email', async () => {
      const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.eml')) : []
      return files.map((f) => readFileSync(join(dir, f), 'utf8')).find((m) => m.includes(`To: ${address}`))
    })
    expect(mail).toContain(`To: ${address}`)
    expect(mail).toContain('[Test]')
    expect(receiver.requests).toHaveLength(1)
  })

  it('an address that is not one is refused next to its field, focusable, nothing saved', async () => {
    await page.goto(`${stack.portal}/portal/settings#alerts`)
    // the browser's own check of type=email would stop "a@b, c@d" before the server: send what it lets through
    await page.getByLabel('Email address').fill('oncall@localhost')
    await page.getByRole('button', { name: 'Save alerts' }).click()
    const field = page.getByLabel('Email address')
    expect(await field.getAttribute('aria-invalid')).toBe('true')
    expect(await page.locator('#alert-email-error').textContent()).toContain('Give one email address')
    await page.goto(`${stack.portal}/portal/settings`)
    expect(await page.getByLabel('Email address').inputValue()).toBe(address)
  })
})
