import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { startReceiver } from '../outbound/harness.ts'
import { allViolations, autofocusRun, eventually, sharedChromium, screenshots, sharedStack, type LocalStack, signInPage } from './support.ts'

/**
 * Issue 29, D11 and D12, in Debian's Chromium against `npm start`'s stack: where focus is when a
 * form's answer loads.
 * - D11: a refused form's page starts with an error summary ("There is a problem", a link per
 *   error), focused on load without any script (kit/error-summary.ts; autofocus on a
 *   tabindex="-1" element), whose links lead to the fields.
 * - D12: after a post that succeeded, the confirmation (the flash) has focus, so the next Tab goes
 *   on from the result instead of from the top of the page (kit/page.ts).
 * Screenshots: .tmp/screenshots/focus-*.
 */

/** Tabs from where focus is now until an element matching `selector` has it; the count, or null when not within `max`. */
async function tabsTo(page: Page, selector: string, max = 200): Promise<number | null> {
  for (let n = 1; n <= max; n++) {
    await page.keyboard.press('Tab')
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return n
  }
  return null
}

const activeId = (page: Page) => page.evaluate(() => document.activeElement?.id ?? '')

describe('the portal in Chromium: focus after a form (issue 29, D11 and D12)', { timeout: 180_000 }, () => {
  let stack: LocalStack
  let chromium: Awaited<ReturnType<typeof sharedChromium>>
  let page: Page
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let webhookUrl: string

  beforeAll(async () => {
    chromium = await sharedChromium()
    ;[stack, receiver] = await Promise.all([sharedStack(), startReceiver()])
    page = chromium.context.pages()[0] ?? (await chromium.context.newPage())
    // a webhook with a delivery in its log (the log's Debug links are what D12 counts Tabs to)
    const res = await fetch(`${stack.portal}/api/v1/admin/accounts/${stack.credentials.account_id}/integrations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.credentials.operator_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, payload_version: 2, name: 'Focus walk' }),
    })
    expect(res.status).toBe(201)
    webhookUrl = `${stack.portal}/portal/webhooks/${((await res.json()) as { id: string }).id}`
    await signInPage(page, stack)
  }, 120_000)
  afterAll(async () => {
    await chromium?.close()
    await receiver?.close()
    await stack?.stop()
  })

  // mutations: sendPage without the summary (problemsOf/errorSummary) → the focus stays on the
  // page (body) and no "There is a problem"; the summary without autofocus → not focused
  it('a refused form: the page starts with "There is a problem", focused without script, each error a link to its field', async () => {
    // the page's script blocked: the summary's focus is the browser's own (autofocus), not portal.js's
    await page.route('**/portal/assets/portal.js', (route) => route.abort())
    try {
      await page.goto(`${stack.portal}/portal/settings`)
      await page.getByLabel('Key').fill('Not A Key!')
      await page.getByLabel('Label').fill('Plan')
      await page.getByRole('button', { name: 'Create custom field' }).click()
      await page.waitForURL(/\/portal\/settings\/custom-fields$/)
      await autofocusRun(page)
      expect(await activeId(page)).toBe('error-summary')
      const summary = page.locator('#error-summary')
      expect(await summary.getByRole('heading', { level: 2 }).textContent()).toBe('There is a problem')
      // above the fold: its top within the first screenful
      expect((await summary.boundingBox())!.y).toBeLessThan(900)
      const link = summary.getByRole('link')
      expect(await link.count()).toBe(1)
      const key = page.getByLabel('Key')
      expect(await link.getAttribute('href')).toBe(`#${await key.getAttribute('id')}`)
      // the link's words are the field's own error
      const error = await page
        .locator(`#${await key.getAttribute('aria-describedby').then((d) => d!.split(' ').find((id) => id.endsWith('-error')))}`)
        .textContent()
      expect(await link.textContent()).toBe(error!.trim())
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme })
        expect(await allViolations(page), `axe, ${scheme}, refused form`).toEqual([])
      }
      await page.emulateMedia({ colorScheme: 'light' })
      await screenshots(page, 'focus-error-summary')
      // without script the link scrolls to the field
      await link.click()
      expect(new URL(page.url()).hash).toBe(`#${await key.getAttribute('id')}`)
      expect(await key.isVisible()).toBe(true)
    } finally {
      await page.unroute('**/portal/assets/portal.js')
    }
  })

  // mutation: enableErrorSummaryLinks gone from portal.js → the link only scrolls, focus stays on it
  it('with script, an error summary link puts focus in its field', async () => {
    await page.goto(`${stack.portal}/portal/settings`)
    await page.getByLabel('Accent colour').fill('#ffff66')
    await page.getByRole('button', { name: 'Save branding' }).click()
    await page.waitForURL(/\/portal\/settings\/branding$/)
    await autofocusRun(page)
    expect(await activeId(page)).toBe('error-summary')
    const accent = page.getByLabel('Accent colour')
    await page.locator('#error-summary').getByRole('link').first().click()
    expect(await activeId(page)).toBe(await accent.getAttribute('id'))
  })

  // mutation: the flash without autofocus (kit/page.ts resultOf) → focus starts at the top of the
  // page again, and reaching the first Debug link takes as many Tabs as from a fresh load
  it('after a post, focus is on the confirmation, and Tab goes on from there: fewer Tabs to the first Debug link than from the top', async () => {
    // a delivery in the log first (Send test event lands on the log itself, focused there: the
    // webhook screens' own landing, test/browser/endpoints.test.ts), then a post whose answer is
    // the page with a confirmation at its top: saving the endpoint's settings
    await page.goto(webhookUrl)
    await page.getByRole('button', { name: 'Send test event' }).click()
    await page.waitForURL(/flash=/)
    await eventually('the test delivery in the log', async () => {
      await page.goto(webhookUrl)
      return (await page.locator('a[href*="/deliveries/"]').count()) > 0 ? true : undefined
    })
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.waitForURL(/flash=/)
    const landed = page.url()
    await autofocusRun(page)
    expect(await page.evaluate(() => document.activeElement?.classList.contains('flash') ?? false)).toBe(true)
    const flash = (await page.locator('.flash').textContent())!.trim()
    expect(flash.length).toBeGreaterThan(0)
    const fromResult = await tabsTo(page, 'a[href*="/deliveries/"]')
    // the same page without a post before it: Tab starts at the top
    await page.goto(webhookUrl)
    await autofocusRun(page)
    expect(await page.evaluate(() => document.activeElement === document.body)).toBe(true)
    const fromTop = await tabsTo(page, 'a[href*="/deliveries/"]')
    console.log(`Tabs to the first Debug link: ${fromResult} after a post (from the confirmation), ${fromTop} from the top of the page`)
    expect(fromResult).not.toBeNull()
    expect(fromTop).not.toBeNull()
    expect(fromResult!).toBeLessThan(fromTop!)
    await page.goto(landed)
    await screenshots(page, 'focus-after-post')
  })
})
