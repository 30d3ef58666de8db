import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { sharedChromium, screenshots, seriousViolations, sharedStack, type LocalStack, signInPage } from './support.ts'

/**
 * Issue 22, defect 2 in Chromium against `npm start`'s stack: the browser's own reload after
 * "Create key", "Add webhook" and "Rotate secret" (stop it now) repeats nothing. Each form answers
 * 303 to a one-time reveal page; reloading that page shows "this secret was shown once" and no
 * secret; the key list, the webhook list and the signing secret are as after one submission.
 * Screenshots: reveal-*.png in .tmp/screenshots/.
 *
 * Mutations that fail it: a form answering its page (201/200) again instead of redirecting to the
 * reveal page (page.reload() re-posts it: a second key, a second webhook, a second rotation, and
 * waitForURL(/reveal/) fails first); the reveal page not deleting what it showed (the reload shows
 * the secret again).
 */
describe('reloading after a form in Chromium repeats nothing', { timeout: 120_000 }, () => {
  let stack: LocalStack
  let chromium: Awaited<ReturnType<typeof sharedChromium>>
  let page: Page
  const operator = () => ({ authorization: `Bearer ${stack.credentials.operator_token}` })
  const admin = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${stack.portal}/api/v1/admin/accounts/${stack.credentials.account_id}${path}`, { headers: operator() })
    expect(res.status).toBe(200)
    return (await res.json()) as T
  }
  const secretOnPage = async () => (await page.locator('.secret code').first().textContent())!.trim()
  /** reloads the reveal page: the one-time notice, and not the secret */
  const reloadShowsNotice = async (secret: string) => {
    await page.reload()
    await expect.poll(() => page.textContent('h1')).toBe('Shown once')
    const main = (await page.textContent('main'))!
    expect(main).toContain('This secret was shown once; rotate again if you lost it.')
    expect(main).not.toContain(secret)
  }

  beforeAll(async () => {
    ;[chromium, stack] = await Promise.all([sharedChromium(), sharedStack()])
    page = chromium.context.pages()[0] ?? (await chromium.context.newPage())
    await signInPage(page, stack)
    await page.waitForURL((u) => u.pathname === '/portal/')
  }, 120_000)
  afterAll(async () => {
    await chromium?.close()
    await stack?.stop()
  })

  it('create key, reload: one new key, and the one-time notice', async () => {
    const { data } = await admin<{ data: Array<{ id: string; type: string }> }>('/connections')
    const connectionId = data.find((c) => c.type === 'api')!.id
    // the connection page's key table: one row per key, its prefix in a <code> ending in "…"
    const keyRows = async () => {
      await page.goto(`${stack.portal}/portal/connections/${connectionId}`)
      return page
        .locator('tr')
        .filter({ has: page.locator('code', { hasText: /^lsk_.*…$/ }) })
        .count()
    }
    const keysBefore = await keyRows()
    await page.getByRole('button', { name: 'Create key' }).click()
    await page.waitForURL(/\/portal\/reveal\//)
    const key = await secretOnPage()
    expect(key).toMatch(/^lsk_/)
    expect(page.url()).not.toContain(key)
    expect(await seriousViolations(page), 'axe on the reveal page').toEqual([])
    await screenshots(page, 'reveal-key')
    await reloadShowsNotice(key)
    expect(await seriousViolations(page), 'axe on the shown-once page').toEqual([])
    await screenshots(page, 'reveal-shown-once')
    expect(await keyRows()).toBe(keysBefore + 1)
  })

  it('add webhook, reload: one webhook', async () => {
    const url = `https://hooks.example.com/reload-${Date.now()}`
    await page.goto(`${stack.portal}/portal/webhooks`)
    await page.getByLabel('Endpoint URL').fill(url)
    await page.getByRole('button', { name: 'Add webhook' }).click()
    await page.waitForURL(/\/portal\/reveal\//)
    const secret = await secretOnPage()
    expect(secret).toMatch(/^whsec_/)
    await screenshots(page, 'reveal-webhook')
    await reloadShowsNotice(secret)
    const { data } = await admin<{ data: Array<{ url: string }> }>('/integrations')
    expect(data.filter((i) => i.url === url)).toHaveLength(1)
  })

  it('rotate secret (stop it now), reload: no second rotation, the copied secret is the one that signs', async () => {
    const { data } = await admin<{ data: Array<{ id: string; url: string }> }>('/integrations')
    const integration = data.find((i) => i.url.includes('/reload-'))!
    await page.goto(`${stack.portal}/portal/webhooks/${integration.id}`)
    await page.getByLabel('Keep the old secret signing for').selectOption('0')
    await page.getByRole('button', { name: 'Rotate secret' }).click()
    // "stop it now" asks first (issue 22 job 5: destructive actions confirm); only the confirmed post rotates
    await page.getByRole('button', { name: 'Rotate and stop the old secret now' }).click()
    await page.waitForURL(/\/portal\/reveal\//)
    const copied = await secretOnPage()
    await screenshots(page, 'reveal-rotated')
    await reloadShowsNotice(copied)
    // what signs now, as the webhook's page reveals it: still the secret copied
    await page.goto(`${stack.portal}/portal/webhooks/${integration.id}`)
    await page.getByRole('button', { name: 'Reveal secret' }).click()
    await page.waitForURL(/\/portal\/reveal\//)
    expect(await secretOnPage()).toBe(copied)
  })
})
