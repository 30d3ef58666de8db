import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { edgePush, eventually, sharedChromium, screenshots, sidewaysScroll, sharedStack, type LocalStack, signInPage, allViolations } from './support.ts'

/**
 * Issue 22, job 6 ("see why a push failed") in Debian's Chromium against `npm start`'s stack:
 * an accepted push, one with a wrong key of the account's (a revoked one is the HTTP test's),
 * malformed JSON, then the tenant follows "Recent pushes" from the connection page and reads
 * each answer with its error, key, request id (screenshots .tmp/screenshots/inbound-debugger-*;
 * axe in light and dark, 390 px). test/portal/inbound-debugger.test.ts covers every field.
 */
describe('the inbound debugger in Chromium', { timeout: 120_000 }, () => {
  let stack: LocalStack
  let chromium: Awaited<ReturnType<typeof sharedChromium>>
  let page: Page
  const operator = () => ({ authorization: `Bearer ${stack.credentials.operator_token}`, 'content-type': 'application/json' })
  const admin = (path: string) => `${stack.portal}/api/v1/admin/accounts/${stack.credentials.account_id}${path}`

  beforeAll(async () => {
    ;[chromium, stack] = await Promise.all([sharedChromium(), sharedStack()])
    page = chromium.context.pages()[0] ?? (await chromium.context.newPage())
  }, 120_000)
  afterAll(async () => {
    await chromium?.close()
    await stack?.stop()
  })

  it('a tenant sees an accepted, a malformed and a wrong-token push, with why, from the connection page', async () => {
    const key = { authorization: `Bearer ${stack.credentials.api_key}` }
    const good = await edgePush(stack, '/v1/contacts', key, { contacts: [{ external_id: 'dbg-1', email: 'ann@example.com', shoe_size: 44 }] })
    expect(good.status, good.body).toBe(202)
    // edgePush sends JSON: a string body is JSON text that is no push body (400 invalid payload)
    const malformed = await edgePush(stack, '/v1/contacts', key, 'not a push')
    expect(malformed.status).toBe(400)
    const webhookPath = new URL(stack.credentials.webhook_url).pathname
    const wrong = await edgePush(stack, webhookPath, { 'x-webhook-token': 'wrong-token-value' }, { contacts: [{ external_id: 'dbg-2' }] })
    expect(wrong.status).toBe(401)

    const list = (await (await fetch(admin('/connections'), { headers: operator() })).json()) as { data: Array<{ id: string; type: string }> }
    const apiId = list.data.find((c) => c.type === 'api')!.id
    await signInPage(page, stack)

    // from the connection page, as a tenant finds it
    await page.goto(`${stack.portal}/portal/connections/${apiId}`)
    await page.getByRole('link', { name: 'Recent pushes' }).click()
    await page.waitForURL((u) => u.pathname === `/portal/connections/${apiId}/pushes`)
    // the edge writes its entries within a couple of seconds (push-log.ts)
    // mutation: not recording refused pushes (no entry before the 202's) leaves one row, and this times out
    await eventually('both API pushes on the debugger', async () => {
      await page.reload()
      return (await page.locator('tbody tr').count()) >= 2 ? true : undefined
    })
    const rows = page.locator('tbody tr')
    expect(await rows.nth(0).textContent()).toContain('400 bad request')
    expect(await rows.nth(0).textContent()).toContain(JSON.parse(malformed.body).error)
    expect(await rows.nth(1).textContent()).toContain('202 accepted')
    expect(await rows.nth(1).textContent()).toContain('shoe_size')
    expect(await page.content()).not.toContain(stack.credentials.api_key)
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      // mutation: a status badge in --bad red without the dark palette fails contrast in dark mode
      expect(await allViolations(page), `axe, ${scheme}, inbound debugger`).toEqual([])
      await screenshots(page, `inbound-debugger-${scheme}`)
    }
    await page.emulateMedia({ colorScheme: 'light' })
    const narrow = await sidewaysScroll(page, 390)
    expect(narrow.scrollWidth, narrow.sticksOut.join(', ')).toBeLessThanOrEqual(narrow.clientWidth)

    // the webhook source: the wrong token is shown as such, never its value
    const webhookId = webhookPath.split('/').pop()!
    await page.goto(`${stack.portal}/portal/connections/${webhookId}/pushes`)
    await eventually('the refused source push', async () => {
      await page.reload()
      return (await page.locator('tbody tr').count()) >= 1 ? true : undefined
    })
    expect(await page.locator('tbody tr').first().textContent()).toContain('a token that does not match')
    expect(await page.content()).not.toContain('wrong-token-value')
    expect(await allViolations(page), 'axe, webhook source debugger').toEqual([])
    await screenshots(page, 'inbound-debugger-source')
  })
})
