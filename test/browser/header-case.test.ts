import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BrowserContext, Page } from 'playwright-core'
import { edgePush, eventually, sharedChromium, sharedStack, type LocalStack, signInPage } from './support.ts'

/**
 * Table headers show their text as written (docs/portal.md, "Tables at 390 px"): a header can
 * hold a case-sensitive identifier (an API key's display prefix, a source id, a field name), so
 * the stylesheet transforms the case of none of them, nor of the column names a stacked cell
 * repeats. In Debian's Chromium against the shared `npm start` stack: the Activity screen's
 * "Rate-limit windows now" (row headers "API key: demo key (lsk_…)", "Source: …") and a mapping
 * review of a push (row headers `external_id`, `email`).
 *
 * Mutation: `text-transform: uppercase` back on `th` (or on `td[data-label]::before`) in
 * portal.css → "API KEY: DEMO KEY (LSK_…)", "EXTERNAL_ID".
 */
describe('table headers keep the case of what they say', { timeout: 120_000 }, () => {
  let stack: LocalStack
  let chromium: Awaited<ReturnType<typeof sharedChromium>>
  let context: BrowserContext
  let page: Page
  let apiConnectionId: string

  beforeAll(async () => {
    chromium = await sharedChromium()
    stack = await sharedStack()
    context = chromium.context
    page = context.pages()[0] ?? (await context.newPage())
    await signInPage(page, stack)
    const list = (await (
      await fetch(`${stack.portal}/api/v1/admin/accounts/${stack.credentials.account_id}/connections`, {
        headers: { authorization: `Bearer ${stack.credentials.operator_token}` },
      })
    ).json()) as { data: Array<{ id: string; type: string }> }
    apiConnectionId = list.data.find((c) => c.type === 'api')!.id
  }, 120_000)
  afterAll(async () => {
    await chromium?.close()
    await stack?.stop()
  })

  /** every header cell of the page: its text as written, as rendered (innerText applies text-transform), and its transform */
  const headers = () =>
    page.locator('main th').evaluateAll((cells) =>
      cells.map((c) => ({
        written: (c.textContent ?? '').replace(/\s+/g, ' ').trim(),
        // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is the point (innerText applies text-transform)
        shown: (c as HTMLElement).innerText.replace(/\s+/g, ' ').trim(),
        transform: getComputedStyle(c).textTransform,
      })),
    )

  const expectAsWritten = (found: Array<{ written: string; shown: string; transform: string }>) => {
    expect(found.filter((h) => h.shown !== h.written || h.transform !== 'none')).toEqual([])
  }

  it('Activity: the rate-limit windows name a key and a source as written', async () => {
    await page.goto(`${stack.portal}/portal/activity`)
    const found = await headers()
    const key = found.find((h) => h.written.startsWith('API key: demo key (lsk_'))
    expect(key, 'the row of the demo key').toBeDefined()
    expect(found.some((h) => h.written.startsWith('Source: '))).toBe(true)
    expectAsWritten(found)
  })

  it('a mapping review names its fields as written, wide and stacked at 390 px', async () => {
    const pushed = await edgePush(
      stack,
      '/v1/contacts',
      { authorization: `Bearer ${stack.credentials.api_key}` },
      { contacts: [{ external_id: 'case-1', email: 'ann@example.com', first_name: 'Ann' }] },
    )
    expect(pushed.status, pushed.body).toBe(202)
    const review = `${stack.portal}/portal/connections/${apiConnectionId}/mappings/review?from=email&to=email&rows=1`
    // the edge writes its sample of the push within a couple of seconds (push-recorder.ts)
    await eventually('the review to compare the last push', async () => {
      await page.goto(review)
      return (await page.locator('#side-by-side').count()) > 0 ? true : undefined
    })
    const found = await headers()
    expect(found.map((h) => h.written)).toEqual(expect.arrayContaining(['external_id', 'email']))
    expectAsWritten(found)

    await page.setViewportSize({ width: 390, height: 844 })
    try {
      await page.goto(review)
      expectAsWritten(await headers())
      // the column name a stacked cell repeats before its value
      const labels = await page.locator('main td[data-label]').evaluateAll((cells) => cells.map((c) => getComputedStyle(c, '::before').textTransform))
      expect(labels.length).toBeGreaterThan(0)
      expect(labels.filter((t) => t !== 'none')).toEqual([])
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 })
    }
  })
})
