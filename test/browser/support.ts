import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { AxeBuilder } from '@axe-core/playwright'
import { fromHub } from './hub-client.ts'
import { managementApp } from '../blackbox/client.ts'
import { createTestTenant } from '../helpers/tenant.ts'
import { assertChromium, CHROMIUM_LAUNCH, type LocalStack } from './local-stack.ts'

export { startLocalStack, type LocalStack } from './local-stack.ts'

const ROOT = join(import.meta.dirname, '..', '..')
/** Screenshots of the screens, when asked for (not committed: .tmp/ is ignored); docs/portal/ holds copies. */
const SCREENSHOTS = join(ROOT, '.tmp', 'screenshots')
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const VIEWPORT = { width: 1280, height: 900 }

/**
 * Whether this run takes screenshots: `SCREENSHOTS=1`, or `UPDATE_DOCS_SCREENSHOTS=1` (`npm run
 * screenshots`, which copies them to docs/portal/). Nothing in a test run reads them, and a
 * full-page PNG costs about as much CPU as an axe run: a plain `npm test` takes none.
 */
export const takingScreenshots = () => process.env.SCREENSHOTS === '1' || process.env.UPDATE_DOCS_SCREENSHOTS === '1'

/**
 * A Chromium of this file's own (a fresh profile, launched and closed here), for a file that must
 * not share the browser: the system clipboard is one per browser, so the files that copy and read
 * it back have their own. Missing Chromium: the suite fails (never skips) and says how to install it.
 */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  assertChromium()
  const userDataDir = mkdtempSync(join(tmpdir(), 'lsv-chromium-'))
  // a fresh profile each run (playwright passes it as --user-data-dir)
  const context = await chromium.launchPersistentContext(userDataDir, { ...CHROMIUM_LAUNCH, viewport: VIEWPORT })
  return {
    context,
    async close() {
      await context.close().catch(() => {})
      rmSync(userDataDir, { recursive: true, force: true })
    },
  }
}

/**
 * The suite's shared Chromium (started once for the run by test/setup/browser-hub.ts), in a
 * browser context of this file's own: its own cookies, storage and permissions, 1280×900 as the
 * file's own browser would be. `close()` closes the context and this file's connection only.
 */
export async function sharedChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const { wsEndpoint } = await fromHub('/chromium')
  const browser = await chromium.connect(wsEndpoint)
  const context = await browser.newContext({ viewport: VIEWPORT })
  return {
    context,
    async close() {
      await context.close().catch(() => {})
      await browser.close().catch(() => {})
    },
  }
}

/**
 * The suite's shared `npm start` stack (test/setup/browser-hub.ts) with a tenant of this file's
 * own, made through the management API with random ids (test/helpers/tenant.ts) in the shape of
 * the stack's demo tenant (scripts/lib/demo-tenant.ts): example.com authorized, an api connection
 * with one key holding the three scopes, a webhook connection with its token. `stop()` leaves the
 * stack running (the hub stops it after the run).
 */
export async function sharedStack(): Promise<LocalStack> {
  const shared = await fromHub('/stack')
  const tenant = await createTestTenant(
    { managementApi: managementApp(shared.portal), operatorToken: shared.operatorToken },
    {
      name: 'Demo',
      api: { source: 'demo-api', key: { scopes: ['contacts:write', 'contacts:links:write', 'contacts:read'], name: 'demo key' } },
      webhook: { source: 'demo-webhook' },
      partner: false,
    },
  )
  const edgeUrl = shared.edgeUrlTemplate.replace('{public_id}', tenant.publicId)
  return {
    ports: shared.ports,
    portal: shared.portal,
    dataDir: shared.dataDir,
    credentials: {
      public_id: tenant.publicId,
      account_id: tenant.accountId,
      api_key: tenant.key,
      webhook_url: tenant.webhookUrl,
      webhook_token: tenant.sourceToken,
      operator_token: shared.operatorToken,
      edge_url: edgeUrl,
      portal_url: shared.portal,
      api_source: tenant.apiSource,
      webhook_source: 'demo-webhook',
    },
    output: () => '',
    stop: async () => {},
  }
}

/** A POST to the edge over node:http, with the tenant's edge Host header (the name need not resolve). */
export function edgePush(stack: LocalStack, path: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; body: string }> {
  const payload = Buffer.from(JSON.stringify(body))
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: stack.ports.edge,
        method: 'POST',
        path,
        headers: { host: new URL(stack.credentials.edge_url).host, 'content-type': 'application/json', 'content-length': String(payload.length), ...headers },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (c) => (text += c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
      },
    )
    req.on('error', reject)
    req.end(payload)
  })
}

type AxeResults = Awaited<ReturnType<AxeBuilder['analyze']>>

/**
 * axe-core on the page as it is, with AxeBuilder's defaults (every rule, the whole document).
 * AxeBuilder's analyze() injects axe's 500 kB source into the page on every run and opens a blank
 * page to merge the results: measured on the portal's screens (docs/testing.md) 3.3–3.7 s a run
 * on a loaded machine, of which `axe.run` itself is 0.5 s. On a page without frames the first run
 * of a document goes through AxeBuilder's legacy mode (axe injected into the page and run there,
 * no blank page: 1.5 s), and the next runs on the same document (a navigation drops axe) call the
 * `axe.run` already in it. A page with frames goes through AxeBuilder's default.
 */
async function axeRun(page: Page): Promise<AxeResults> {
  if (page.frames().length > 1) return new AxeBuilder({ page }).analyze()
  if (!(await page.evaluate('typeof window.axe?.run === "function"'))) return new AxeBuilder({ page }).setLegacyMode().analyze()
  return page.evaluate(() => (window as unknown as { axe: { run(context: Document, options: object): Promise<AxeResults> } }).axe.run(document, {}))
}

/** Every axe violation of the page as it is, whatever its impact (a screen must have none). */
export async function allViolations(page: Page): Promise<Array<{ id: string; impact: string | null | undefined; nodes: string[] }>> {
  const result = await axeRun(page)
  return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5) }))
}

/** A single-use portal sign-in link the operator mints (management-api.md), for the demo account or another. */
export async function mintPortalLink(stack: LocalStack, accountId = stack.credentials.account_id): Promise<string> {
  const res = await fetch(`${stack.portal}/api/v1/admin/accounts/${accountId}/portal-links`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.credentials.operator_token}`, 'content-type': 'application/json' },
    body: '{}',
  })
  if (res.status !== 201) throw new Error(`minting a portal link answered ${res.status}: ${await res.text()}`)
  return ((await res.json()) as { url: string }).url
}

/** Signs the page in as a tenant does: it opens a freshly minted sign-in link. */
export async function signInPage(page: Page, stack: LocalStack, accountId?: string): Promise<void> {
  await page.goto(await mintPortalLink(stack, accountId))
}

/** axe-core on the page as it is: no serious or critical violation. Returns them for the assertion. */
export async function seriousViolations(page: Page): Promise<Array<{ id: string; impact: string | null | undefined; help: string; nodes: string[] }>> {
  const result = await axeRun(page)
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5) }))
}

/**
 * The page at `width` px wide: whether the document scrolls sideways (its scrollWidth beyond the
 * viewport's client width; tables and code blocks scroll inside their own box and do not count),
 * with the elements that stick out when it does, for the failure message. Back to 1280 px after.
 */
export async function sidewaysScroll(page: Page, width: number): Promise<{ scrollWidth: number; clientWidth: number; sticksOut: string[] }> {
  await page.setViewportSize({ width, height: 900 })
  try {
    return await page.evaluate(() => {
      const root = document.documentElement
      const clientWidth = root.clientWidth
      const sticksOut = [...document.body.querySelectorAll('*')]
        .filter((e) => e.getBoundingClientRect().right > clientWidth + 0.5 && !e.parentElement?.closest('.table-wrap, pre'))
        .slice(0, 5)
        .map(
          (e) =>
            `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.className ? `.${String(e.className).replace(/\s+/g, '.')}` : ''} (right ${Math.round(e.getBoundingClientRect().right)})`,
        )
      return { scrollWidth: Math.max(root.scrollWidth, document.body.scrollWidth), clientWidth, sticksOut }
    })
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 })
  }
}

/** Full-page screenshots at 1280 px and 360 px wide, into SCREENSHOTS, when this run takes them (takingScreenshots). */
export async function screenshots(page: Page, name: string): Promise<void> {
  if (!takingScreenshots()) return
  mkdirSync(SCREENSHOTS, { recursive: true })
  for (const width of [1280, 360]) {
    await page.setViewportSize({ width, height: 900 })
    await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true })
  }
  await page.setViewportSize({ width: 1280, height: 900 })
}

/**
 * Once the browser has run the page's `autofocus`: it does so in its next rendering update (the
 * HTML standard's "flush autofocus candidates", before that update's animation frame callbacks),
 * which can come after the load event a navigation waits for. Reading the focus right after the
 * navigation read it before the portal's focus on the confirmation, once in a run (2026-11-29).
 */
export async function autofocusRun(page: Page): Promise<void> {
  await page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => resolve())))
}

/** Polls until `check` returns a value (not undefined); fails with `what` after ~20 s. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, tries = 100, everyMs = 200): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await check()
    if (v !== undefined) return v
    await sleep(everyMs)
  }
  throw new Error(`gave up waiting: ${what}`)
}
