import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { launchChromium, screenshots, seriousViolations, sharedStack, type LocalStack, signInPage } from './support.ts'

/**
 * Issue 22, jobs 7 and 9 in Chromium against `npm start`'s stack. Come back: a portal page opened
 * signed out (a deep link) is where the next sign-in lands. Know how to send: the connection's
 * page shows the request on the account's edge host, with copy buttons that copy the examples.
 * test/local/how-to-send.test.ts runs the examples themselves; test/portal/return-path.test.ts
 * covers the redirect's safety.
 */
describe('coming back to a deep link, and how to send, in Chromium', { timeout: 120_000 }, () => {
  let stack: LocalStack
  let chromium: Awaited<ReturnType<typeof launchChromium>>
  let page: Page
  const webhookId = () => new URL(stack.credentials.webhook_url).pathname.split('/').pop()!

  beforeAll(async () => {
    ;[chromium, stack] = await Promise.all([launchChromium(), sharedStack()])
    page = chromium.context.pages()[0] ?? (await chromium.context.newPage())
    await chromium.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.portal })
  }, 120_000)
  afterAll(async () => {
    await chromium?.close()
    await stack?.stop()
  })

  // mutation: access.ts redirects to HOME_PATH whatever the remembered path -> the page after the
  // sign-in link is /portal/, not the connection's page
  it('a deep link opened signed out is where the sign-in link lands; its "How to send" copies', async () => {
    const deepLink = `/portal/connections/${encodeURIComponent(webhookId())}`
    await page.goto(`${stack.portal}${deepLink}`)
    expect(new URL(page.url()).pathname).toBe('/portal/')
    await expect.poll(() => page.textContent('h1')).toBe('Not signed in')

    // the operator mints a sign-in link (management-api.md); the tenant opens it in the same browser
    await signInPage(page, stack)
    await page.waitForURL((u) => u.pathname === deepLink)

    const section = page.locator('section', { has: page.getByRole('heading', { name: 'How to send' }) })
    await expect.poll(() => section.locator('#send-url').textContent()).toBe(`POST ${stack.credentials.webhook_url}`)
    const curl = (await page.locator('#send-curl').textContent())!
    expect(curl).toContain("-H 'x-webhook-token: YOUR_SOURCE_TOKEN'")
    expect(await page.content()).not.toContain(stack.credentials.webhook_token)
    await section.getByRole('button', { name: 'Copy' }).first().click()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(curl.trim())
    expect(await seriousViolations(page), 'axe on the connection page').toEqual([])
    await section.scrollIntoViewIfNeeded()
    await screenshots(page, 'connection-how-to-send')
  })
})
