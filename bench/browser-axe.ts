/**
 * What one axe run and one screenshot cost on the portal's screens (docs/testing.md, "Where a
 * browser file's time goes"): `npx node bench/browser-axe.ts [rounds]`. Starts `npm start`'s stack
 * and Debian's Chromium (stopped at the end), signs the demo tenant in, and on each of five
 * screens times, one after the other on the same document (so machine noise hits each alike):
 * - AxeBuilder's analyze() (axe injected again, results merged in a blank page: the suite's way
 *   before issue 30);
 * - AxeBuilder's legacy mode (axe injected again, run in the page: the suite's first run on a document);
 * - `axe.run` already in the page (the suite's later runs on the same document);
 * - a full-page screenshot at 1280 px (PNG encoding; the suite takes them only when asked).
 * Prints the mean milliseconds of each, and the violations each way found (they must agree).
 */
import { AxeBuilder } from '@axe-core/playwright'
import { chromium } from 'playwright-core'
import { CHROMIUM_LAUNCH, startLocalStack } from '../test/browser/local-stack.ts'

const ROUNDS = Number(process.argv[2] ?? 3)
const SCREENS = ['/portal/', '/portal/settings', '/portal/connections', '/portal/webhooks', '/portal/audit']

const stack = await startLocalStack()
const browser = await chromium.launch(CHROMIUM_LAUNCH)
try {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
  const minted = await fetch(`${stack.portal}/api/v1/admin/accounts/${stack.credentials.account_id}/portal-links`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.credentials.operator_token}`, 'content-type': 'application/json' },
    body: '{}',
  })
  await page.goto(((await minted.json()) as { url: string }).url)
  const ms: Record<string, number[]> = {}
  const found = new Set<string>()
  const timed = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    const began = performance.now()
    const result = await run()
    ;(ms[what] ??= []).push(performance.now() - began)
    return result
  }
  type Violations = { violations: Array<{ id: string }> }
  const inPage = () => page.evaluate(() => (window as unknown as { axe: { run(d: Document, o: object): Promise<Violations> } }).axe.run(document, {}))
  for (let round = 0; round < ROUNDS; round++) {
    for (const path of SCREENS) {
      await page.goto(`${stack.portal}${path}`)
      const results = [
        await timed('AxeBuilder analyze()', () => new AxeBuilder({ page }).analyze()),
        await timed('AxeBuilder legacy mode', () => new AxeBuilder({ page }).setLegacyMode().analyze()),
        await timed('axe.run already in the page', inPage),
      ]
      found.add(results.map((r) => JSON.stringify(r.violations.map((v) => v.id).sort())).join(' / '))
      await timed('full-page screenshot, 1280 px', () => page.screenshot({ fullPage: true }))
    }
  }
  for (const [what, all] of Object.entries(ms))
    console.log(`${what.padEnd(32)} ${(all.reduce((a, b) => a + b, 0) / all.length).toFixed(0).padStart(6)} ms (${all.length} runs)`)
  console.log(`violations found (each way, per screen): ${[...found].join('; ')}`)
} finally {
  await browser.close()
  await stack.stop()
}
