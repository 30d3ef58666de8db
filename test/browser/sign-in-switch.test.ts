import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { sharedChromium, seriousViolations, sharedStack, type LocalStack, mintPortalLink } from './support.ts'

/**
 * Issue 21, 8d in Chromium against `npm start`'s stack: a sign-in link of another account, opened
 * while signed in, asks before it replaces the session. "Stay" keeps the session and leaves the
 * link unused; "Continue" (the browser's own same-origin form post) switches to the link's
 * account; the link is then used up.
 */
describe('a sign-in link opened while signed in, in Chromium', { timeout: 120_000 }, () => {
  let stack: LocalStack
  let chromium: Awaited<ReturnType<typeof sharedChromium>>
  let page: Page
  const otherPublicId = `t-${randomBytes(5).toString('hex')}`
  let otherAccountId: string
  const operator = () => ({ authorization: `Bearer ${stack.credentials.operator_token}`, 'content-type': 'application/json' })
  const mint = (accountId: string) => mintPortalLink(stack, accountId)

  beforeAll(async () => {
    ;[chromium, stack] = await Promise.all([sharedChromium(), sharedStack()])
    page = chromium.context.pages()[0] ?? (await chromium.context.newPage())
    const res = await fetch(`${stack.portal}/api/v1/admin/accounts`, {
      method: 'POST',
      headers: operator(),
      body: JSON.stringify({ public_id: otherPublicId, name: 'Second Account' }),
    })
    expect(res.status).toBe(201)
    otherAccountId = ((await res.json()) as { id: string }).id
  }, 120_000)
  afterAll(async () => {
    await chromium?.close()
    await stack?.stop()
  })

  // mutation: GET /portal/sign-in redeems without asking when a session is present -> the page
  // after goto is the home page of the second account, and "Switch account?" is never shown
  it('asks, "Stay" keeps the session, "Continue" switches and uses the link', async () => {
    await page.goto(await mint(stack.credentials.account_id))
    expect(new URL(page.url()).pathname).toBe('/portal/')
    await expect.poll(() => page.textContent('body')).toContain(stack.credentials.public_id)

    const link = await mint(otherAccountId)
    await page.goto(link)
    await expect.poll(() => page.textContent('h1')).toBe('Switch account?')
    expect(await page.textContent('body')).toContain(otherPublicId)
    expect(await seriousViolations(page), 'axe on the switch-account page').toEqual([])

    // "Stay": home, still the first account
    await page.getByRole('link', { name: /^Stay signed in to/ }).click()
    await page.waitForURL((u) => u.pathname === '/portal/')
    expect(await page.textContent('body')).toContain(stack.credentials.public_id)
    expect(await page.textContent('body')).not.toContain(otherPublicId)

    // the link was not used by showing the page: open it again and continue
    await page.goto(link)
    await expect.poll(() => page.textContent('h1')).toBe('Switch account?')
    await page.getByRole('button', { name: 'Continue as Second Account' }).click()
    await page.waitForURL((u) => u.pathname === '/portal/')
    await expect.poll(() => page.textContent('body')).toContain(otherPublicId)
    expect(await page.textContent('body')).not.toContain(stack.credentials.public_id)

    // used up: opening it again is the expired page, and the session stays the second account's
    const again = await page.goto(link)
    expect(again?.status()).toBe(410)
    await page.goto(`${stack.portal}/portal/`)
    expect(await page.textContent('body')).toContain(otherPublicId)
  })
})
