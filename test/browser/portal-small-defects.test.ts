import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BrowserContext, Page } from 'playwright-core'
import { sharedChromium, screenshots, seriousViolations, sharedStack, type LocalStack, signInPage, takingScreenshots } from './support.ts'

/**
 * Issue 22, defect 3 ("smaller defects"), where they show: in Debian's Chromium against
 * `npm start`'s stack. The malformed-sample preview with script on, the Source field for a
 * partner CRM connection, the Revoke button's contrast and axe in dark mode, and the audit
 * table at 390 px: one word per action name, stacked rows (issue 29). Screenshots go to
 * .tmp/screenshots/ (small-defects-*).
 */

/** WCAG 2 contrast ratio of two `rgb(r, g, b)` colours. */
function contrast(a: string, b: string): number {
  const lum = (c: string) => {
    const [r, g, bl] = (c.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map((v) => {
      const s = Number(v) / 255
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4
    })
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!
  }
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x)
  return (hi! + 0.05) / (lo! + 0.05)
}

// each test starts from the stack, signs in once, and checks a screen or two with axe
describe('the portal in Chromium: the smaller defects of issue 22', { timeout: 120_000 }, () => {
  let stack: LocalStack
  let chromium: Awaited<ReturnType<typeof sharedChromium>>
  let context: BrowserContext
  let page: Page
  let apiConnectionId: string
  const operator = () => ({ authorization: `Bearer ${stack.credentials.operator_token}`, 'content-type': 'application/json' })
  const admin = (path: string) => `${stack.portal}/api/v1/admin/accounts/${stack.credentials.account_id}${path}`

  beforeAll(async () => {
    chromium = await sharedChromium()
    stack = await sharedStack()
    context = chromium.context
    page = context.pages()[0] ?? (await context.newPage())
    await signInPage(page, stack)
    expect(new URL(page.url()).pathname).toBe('/portal/')
    const list = (await (await fetch(admin('/connections'), { headers: operator() })).json()) as { data: Array<{ id: string; type: string }> }
    apiConnectionId = list.data.find((c) => c.type === 'api')!.id
  }, 120_000)
  afterAll(async () => {
    await chromium?.close()
    await stack?.stop()
  })

  // mutation: portal.js without showFieldErrors (only #preview replaced, as before) → the
  // answer's "not valid JSON" never reaches the page: no #sample-error, nothing happens
  it('a malformed sample previewed with script on shows its error next to the field, and focus goes there', async () => {
    const path = `/portal/connections/${apiConnectionId}`
    await page.goto(`${stack.portal}${path}`)
    const sample = page.getByLabel('Sample record (JSON object) for the preview')
    await sample.fill('{"email": "a@example.com",')
    await page.getByRole('button', { name: 'Preview' }).click()
    const error = page.locator('#sample-error')
    await expect.poll(() => error.isVisible(), { timeout: 15_000 }).toBe(true)
    expect(await error.textContent()).toContain('not valid JSON')
    expect(await sample.getAttribute('aria-invalid')).toBe('true')
    expect((await sample.getAttribute('aria-describedby'))?.split(' ')).toContain('sample-error')
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('sample')
    // enhanced: the page stayed where it was (a plain post would show /preview)
    expect(new URL(page.url()).pathname).toBe(path)
    await screenshots(page, 'small-defects-preview-error')

    // fixed and previewed again: the error goes, the preview comes
    await sample.fill('{"email": "a@example.com", "external_id": "sd-1"}')
    await page.getByRole('button', { name: 'Preview' }).click()
    await expect.poll(() => page.locator('#preview').textContent(), { timeout: 15_000 }).toContain('sd-1')
    expect(await error.count()).toBe(0)
    expect(await sample.getAttribute('aria-invalid')).toBeNull()
  })

  // mutation: the `form:has(… partnercrm …:checked) .source-field` rule gone from portal.css →
  // the Source input stays visible for a partner CRM connection
  it('the Source field is not offered for a partner CRM connection, which is then created', async () => {
    await page.goto(`${stack.portal}/portal/connections`)
    const source = page.getByLabel('Source (optional)')
    expect(await source.isVisible()).toBe(true)
    await source.fill('typed-before')
    await page.getByRole('radio', { name: 'Partner CRM (locations)' }).check()
    expect(await source.isVisible()).toBe(false)
    expect(await source.isDisabled()).toBe(true)
    await page.getByRole('radio', { name: 'API (keys)' }).check()
    expect(await source.isVisible()).toBe(true)
    await page.getByRole('radio', { name: 'Partner CRM (locations)' }).check()
    await page.getByRole('button', { name: 'Create connection' }).click()
    // created (303 to its page), not refused for a source it may not have
    await expect.poll(() => new URL(page.url()).pathname, { timeout: 15_000 }).toMatch(/^\/portal\/connections\/[^/]+$/)
    expect(await page.locator('.field-error').count()).toBe(0)
  })

  // mutation: button.danger back to `color: var(--bad)` alone (the system's grey button face
  // behind dark mode's light red) → 3.1:1, below 4.5, and axe reports color-contrast
  it('dark mode: the Revoke button reads at 4.5:1 or more, and axe finds nothing on the screens touched', async () => {
    await page.emulateMedia({ colorScheme: 'dark' })
    try {
      await page.goto(`${stack.portal}/portal/connections/${apiConnectionId}`)
      await page.getByRole('button', { name: 'Create key' }).click()
      // the form's 303 lands on the reveal page; a goto before that navigation ends could cut the
      // POST short or be interrupted by it (the class of race CI met at stop 39)
      await page.waitForURL(/\/portal\/reveal\//)
      await page.goto(`${stack.portal}/portal/connections/${apiConnectionId}`)
      const revoke = page.getByRole('button', { name: 'Revoke' }).first()
      const colours = await revoke.evaluate((e) => {
        const s = getComputedStyle(e)
        return { color: s.color, background: s.backgroundColor }
      })
      const ratio = contrast(colours.color, colours.background)
      console.log(`Revoke button, dark mode: ${colours.color} on ${colours.background} = ${ratio.toFixed(2)}:1`)
      expect(ratio, JSON.stringify(colours)).toBeGreaterThanOrEqual(4.5)
      expect(await seriousViolations(page), 'axe, dark, connection').toEqual([])
      await screenshots(page, 'small-defects-connection-dark')
      for (const [name, path] of [
        ['connections', '/portal/connections'],
        ['audit', '/portal/audit'],
        ['not-found', '/portal/no-such-screen'],
      ] as const) {
        await page.goto(`${stack.portal}${path}`)
        expect(await seriousViolations(page), `axe, dark, ${name}`).toEqual([])
        await screenshots(page, `small-defects-${name}-dark`)
      }
      expect(await page.locator('h1').textContent()).toBe('Page not found')
    } finally {
      await page.emulateMedia({ colorScheme: 'light' })
    }
  })

  // issue 29 replaced the sideways-scrolling table at 390 px by stacked rows (kit/table-labels.ts).
  // mutations: the stylesheet's narrow-width block gone → the table is wider than its box again;
  // labelTableCells not run by sendPage → no cell says its column; code.action without
  // `white-space: nowrap` → an action name breaks over two lines
  it('at 390 px the audit table is stacked rows, each value under its column name, action names on one line', async () => {
    await page.setViewportSize({ width: 390, height: 844 })
    try {
      await page.goto(`${stack.portal}/portal/audit`)
      const wrap = page.getByRole('region', { name: 'Audit log entries' })
      const box = await wrap.evaluate((e) => ({ scrollWidth: e.scrollWidth, clientWidth: e.clientWidth }))
      expect(box.scrollWidth, 'the stacked table fits its box at 390 px').toBeLessThanOrEqual(box.clientWidth)
      const lines = await page.locator('code.action').evaluateAll((els) => els.map((e) => ({ action: e.textContent, lines: e.getClientRects().length })))
      expect(lines.length).toBeGreaterThan(0)
      expect(lines.filter((l) => l.lines !== 1)).toEqual([])
      // each cell of the first row shows its column's name before its value
      const said = await wrap
        .locator('tbody tr')
        .first()
        .locator('td')
        .evaluateAll((cells) => cells.map((c) => getComputedStyle(c, '::before').content))
      // (its alternative text "" is dropped: a screen reader hears the table's own headers instead)
      expect(said.map((c) => c.replace(/ \/ ""$/, ''))).toEqual(['"When (UTC)"', '"Who"', '"What"', '"Target"', '"Details"'])
      // still a named region the keyboard reaches
      await page.locator('body').focus()
      let reached = false
      for (let i = 0; i < 40 && !reached; i++) {
        await page.keyboard.press('Tab')
        reached = await wrap.evaluate((e) => document.activeElement === e)
      }
      expect(reached, 'Tab reaches the audit table').toBe(true)
      expect(await seriousViolations(page), 'axe at 390 px, audit').toEqual([])
      if (takingScreenshots())
        await page.screenshot({ path: join(import.meta.dirname, '..', '..', '.tmp', 'screenshots', 'small-defects-audit-390-stacked.png'), fullPage: true })
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 })
    }
  })
})
