import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { sharedChromium, screenshots, sidewaysScroll, sharedStack, type LocalStack, signInPage, allViolations } from './support.ts'

/**
 * Issue 22, job 8 ("Start") in Debian's Chromium against `npm start`'s stack: signing in lands
 * on the overview, whose checklist shows the demo tenant's real state (domain, key and pushes
 * set up by the demo; no webhook yet), with 0 axe violations in light and dark mode, no sideways
 * scroll at 390 px, and a to-do step's link reachable from the keyboard. The Webhooks screen's
 * empty state is checked the same way. Screenshots: .tmp/screenshots/overview-*.
 */
describe('the portal in Chromium: the overview', { timeout: 120_000 }, () => {
  let stack: LocalStack
  let chromium: Awaited<ReturnType<typeof sharedChromium>>
  let page: Page

  beforeAll(async () => {
    chromium = await sharedChromium()
    stack = await sharedStack()
    page = chromium.context.pages()[0] ?? (await chromium.context.newPage())
    await signInPage(page, stack)
  }, 120_000)
  afterAll(async () => {
    await chromium?.close()
    await stack?.stop()
  })

  it('sign-in lands on the overview: the demo account’s steps, the health figures, 0 axe violations in light and dark mode', async () => {
    expect(new URL(page.url()).pathname).toBe('/portal/')
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview')
    // the demo tenant (scripts/lib/demo-tenant.ts) has a domain and a key, and no webhook
    const state = (step: string) => page.locator(`li[data-step="${step}"] .state`).textContent()
    expect(await state('domain')).toBe('Done')
    expect(await state('key')).toBe('Done')
    expect(await state('endpoint')).toBe('To do')
    expect(await state('delivery')).toBe('To do')
    expect(await page.locator('dl.stats dt').allTextContents()).toEqual([
      'Pushes accepted',
      'Pushes refused',
      'Deliveries succeeded',
      'Deliveries failed',
      'Deliveries waiting for a retry',
      'Disabled endpoints',
    ])
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      // mutation: a "Done" in --ok green on a dark Canvas without the dark palette, or a figure
      // without its term (dl.stats without dt), makes axe report it
      expect(await allViolations(page), `axe, ${scheme}, overview`).toEqual([])
      await screenshots(page, `overview-${scheme}`)
    }
    await page.emulateMedia({ colorScheme: 'light' })
    const narrow = await sidewaysScroll(page, 390)
    expect(narrow.scrollWidth, narrow.sticksOut.join(', ')).toBeLessThanOrEqual(narrow.clientWidth)
  })

  it('a to-do step’s link is reached from the keyboard and opens the screen where it is done', async () => {
    await page.goto(`${stack.portal}/portal/`)
    const link = page.locator('li[data-step="endpoint"] a')
    expect(await link.getAttribute('href')).toBe('/portal/webhooks#new-h')
    // Tab from the top of the page until the step's link has focus (bounded: the page has few links)
    let reached = false
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press('Tab')
      reached = await link.evaluate((a) => a === document.activeElement)
    }
    expect(reached).toBe(true)
    await page.keyboard.press('Enter')
    await page.waitForURL(/\/portal\/webhooks#new-h$/)
    // the Webhooks screen's empty state says what to do and links the form
    const empty = page.locator('.empty')
    expect(await empty.textContent()).toContain('No webhook yet')
    expect(await empty.locator('a').getAttribute('href')).toBe('#new-h')
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      expect(await allViolations(page), `axe, ${scheme}, webhooks empty`).toEqual([])
      await screenshots(page, `overview-webhooks-empty-${scheme}`)
    }
    await page.emulateMedia({ colorScheme: 'light' })
  })
})
