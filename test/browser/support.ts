import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { spawn, type ChildProcess } from 'node:child_process'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { AxeBuilder } from '@axe-core/playwright'
import { freePort } from '../../scripts/lib/free-port.ts'
import type { DemoCredentials } from '../../scripts/lib/demo-tenant.ts'

const ROOT = join(import.meta.dirname, '..', '..')
const CHROMIUM = '/usr/bin/chromium'
/** Screenshots of every screen, each run (not committed: .tmp/ is ignored); docs/portal/ holds copies. */
const SCREENSHOTS = join(ROOT, '.tmp', 'screenshots')
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Debian's Chromium, never a browser playwright would download. Missing: the suite fails (never
 * skips) and says how to install it (.ci/run does it before `npm test`).
 */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: the portal's browser tests need Debian's Chromium. Install it with: apt-get update && apt-get install -y chromium`)
  }
  const userDataDir = mkdtempSync(join(tmpdir(), 'lsv-chromium-'))
  // a fresh profile each run (playwright passes it as --user-data-dir)
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  return {
    context,
    async close() {
      await context.close().catch(() => {})
      rmSync(userDataDir, { recursive: true, force: true })
    },
  }
}

export interface LocalStack {
  ports: { edge: number; portal: number; worker: number; dispatcher: number }
  credentials: DemoCredentials
  portal: string
  /** the stack's DATA_DIR (its alert emails are files in `alert-mail/` there) */
  dataDir: string
  output(): string
  stop(): Promise<void>
}

/** `npm start`'s script on free ports and a fresh data folder; resolves once every service answers. */
export async function startLocalStack(): Promise<LocalStack> {
  const ports = { edge: await freePort(), portal: await freePort(), worker: await freePort(), dispatcher: await freePort() }
  const dataDir = mkdtempSync(join(tmpdir(), 'lsv-browser-data-'))
  const child: ChildProcess = spawn(process.execPath, ['scripts/start-local.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      EDGE_PORT: String(ports.edge),
      PORTAL_PORT: String(ports.portal),
      UPSERT_WORKER_PORT: String(ports.worker),
      WEBHOOK_DISPATCHER_PORT: String(ports.dispatcher),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  let output = ''
  child.stdout!.on('data', (d) => (output += d))
  child.stderr!.on('data', (d) => (output += d))
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  const stop = async () => {
    if (child.exitCode === null && child.pid) {
      process.kill(-child.pid, 'SIGTERM')
      const done = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)])
      if (!done && child.exitCode === null) process.kill(-child.pid, 'SIGKILL')
    }
    rmSync(dataDir, { recursive: true, force: true })
  }
  for (let i = 0; i < 600 && child.exitCode === null; i++) {
    if (output.includes('Stop with Ctrl-C.') && existsSync(join(dataDir, 'demo-credentials.json'))) {
      const credentials = JSON.parse(readFileSync(join(dataDir, 'demo-credentials.json'), 'utf8')) as DemoCredentials
      return { ports, credentials, portal: `http://localhost:${ports.portal}`, dataDir, output: () => output, stop }
    }
    await sleep(100)
  }
  await stop()
  throw new Error(`the local stack did not start:\n${output}`)
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

/** Every axe violation of the page as it is, whatever its impact (a screen must have none). */
export async function allViolations(page: Page): Promise<Array<{ id: string; impact: string | null | undefined; nodes: string[] }>> {
  const result = await new AxeBuilder({ page }).analyze()
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
  const result = await new AxeBuilder({ page }).analyze()
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

/** Full-page screenshots at 1280 px and 360 px wide, into SCREENSHOTS. */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  for (const width of [1280, 360]) {
    await page.setViewportSize({ width, height: 900 })
    await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true })
  }
  await page.setViewportSize({ width: 1280, height: 900 })
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
