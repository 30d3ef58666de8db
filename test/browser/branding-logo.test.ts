import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { solidPng } from '../portal/logo-fixtures.ts'
import { allViolations, launchChromium, screenshots, startLocalStack, signInPage, type LocalStack } from './support.ts'
import { copyScreenshotsToDocs } from './docs-screenshots.ts'

/**
 * Issue 22, job 9, the tenant's logo in Debian's Chromium against `npm start`'s stack (its real
 * composition root: the embedded BrandAssets store): the tenant picks a PNG with the Settings
 * screen's file input (no script involved), the logo is loaded in the header of every screen under
 * the screens' own policy (`img-src 'self'`), with 0 axe violations in light and dark mode, and is
 * removed through the confirmation page. Screenshots: .tmp/screenshots/branding-logo-*.png (docs/portal/branding-logo.png).
 */
describe('the portal in Chromium: the logo', { timeout: 180_000 }, () => {
  let stack: LocalStack
  let chromium: Awaited<ReturnType<typeof launchChromium>>
  let page: Page
  const cspViolations: string[] = []

  beforeAll(async () => {
    chromium = await launchChromium()
    stack = await startLocalStack()
    page = chromium.context.pages()[0] ?? (await chromium.context.newPage())
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text())
    })
    await signInPage(page, stack)
  }, 120_000)
  afterAll(async () => {
    await chromium?.close()
    await stack?.stop()
  })

  /** the header's logo as the browser decoded it (0×0 when it did not load) */
  const headerLogo = () =>
    page.evaluate(() => {
      const img = document.querySelector<HTMLImageElement>('header.top img.logo')
      return img ? { alt: img.alt, width: img.naturalWidth, height: img.naturalHeight, complete: img.complete } : null
    })

  const axeBothSchemes = async (where: string) => {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      expect(await allViolations(page), `axe, ${scheme}, ${where}`).toEqual([])
    }
    await page.emulateMedia({ colorScheme: 'light' })
  }

  it('a PNG chosen with the file input appears in the header of every screen; the page stays accessible', async () => {
    await page.goto(`${stack.portal}/portal/settings`)
    await page.getByLabel('Display name').fill('Acme Reach')
    await page.getByRole('button', { name: 'Save branding' }).click()
    await page.waitForURL(/flash=branding-saved/)
    await page.getByLabel('Logo image').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: solidPng(96, 48, '#c2410c') })
    await page.getByRole('button', { name: 'Upload logo' }).click()
    await page.waitForURL(/flash=logo-saved/)
    expect(await page.getByRole('status').textContent()).toContain('Logo saved.')
    for (const path of ['/portal/settings', '/portal/contacts', '/portal/']) {
      await page.goto(`${stack.portal}${path}`)
      await page.waitForFunction(() => document.querySelector<HTMLImageElement>('header.top img.logo')?.complete === true)
      // mutation: a logo URL the CSP or the session refuses (or no logo in the layout) leaves 0×0 or null
      expect(await headerLogo(), path).toEqual({ alt: 'Acme Reach', width: 96, height: 48, complete: true })
      await axeBothSchemes(path)
    }
    await page.goto(`${stack.portal}/portal/settings`)
    await screenshots(page, 'branding-logo')
    copyScreenshotsToDocs(['branding-logo'])
    expect(cspViolations).toEqual([])
  })

  it('a file that is not an image is refused next to the field, in words', async () => {
    await page.goto(`${stack.portal}/portal/settings`)
    await page.getByLabel('Replace the logo').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: Buffer.from('not an image at all') })
    await page.getByRole('button', { name: 'Upload logo' }).click()
    await page.waitForURL(/logo_problem=not-an-image/)
    const field = page.getByLabel('Replace the logo')
    // mutation: a refusal without aria-describedby/aria-invalid leaves the message unannounced
    expect(await field.getAttribute('aria-invalid')).toBe('true')
    const describedBy = (await field.getAttribute('aria-describedby'))!.split(' ')
    const error = page.locator(`[id="${describedBy.find((id) => id.endsWith('-error'))}"]`)
    expect(await error.textContent()).toContain('not a PNG, JPEG or WebP image')
    await axeBothSchemes('refused upload')
    // the saved logo is still the one shown
    expect((await headerLogo())?.width).toBe(96)
  })

  it('removing asks first, then the header has no logo', async () => {
    await page.goto(`${stack.portal}/portal/settings`)
    await page.getByRole('button', { name: 'Remove logo…' }).click()
    // a GET form: the URL may end in an empty query
    await page.waitForURL(/\/portal\/settings\/logo\/delete\??$/)
    expect(await page.locator('h1').textContent()).toBe('Remove the logo?')
    await axeBothSchemes('removal question')
    // the question itself changes nothing; mutation: a GET that removes fails this
    expect((await headerLogo())?.width).toBe(96)
    await page.getByRole('button', { name: 'Remove logo', exact: true }).click()
    await page.waitForURL(/flash=logo-removed/)
    expect(await headerLogo()).toBeNull()
    expect(await page.locator('#logo-current').textContent()).toContain('No logo yet')
    expect(cspViolations).toEqual([])
  })
})
