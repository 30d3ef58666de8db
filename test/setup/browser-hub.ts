/**
 * vitest's globalSetup (vitest.config.ts): one `npm start` stack and one Chromium for every
 * portal browser file of the run, instead of one of each per file (issue 30: the sixteen browser
 * files spent about 18 s each starting a stack on a loaded machine, and 2 s launching Chromium).
 *
 * vitest runs each file in a fresh process, so the stack and the browser live here, in vitest's
 * own process, and are started lazily: this set-up only opens a small loopback server (the hub)
 * whose address it `provide`s; the first browser file that asks (`GET /stack`, `GET /chromium`;
 * test/browser/support.ts sharedStack and sharedChromium) starts the stack or the browser, the
 * others get the same one. A run without browser files starts neither. Each file makes its own
 * tenant with random ids on the shared stack (test/helpers/tenant.ts), and its own browser
 * context (cookies, permissions) in the shared Chromium. The stack's operator token is the
 * tests' own (TEST_OPERATOR_TOKEN), so a black-box file that drives the management API with the
 * management harness's OPERATOR can share it too.
 *
 * A start that fails (Chromium missing, a stack that does not come up) answers 500 with the
 * reason to every file that asks: their set-up throws it, and the run counts them as failed.
 * Teardown stops what was started, by pid, whatever happened: the stack's process group
 * (SIGTERM, then SIGKILL after 10 s) and the browser (closed, killed if it does not close).
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestProject } from 'vitest/node'
import type { BrowserServer } from 'playwright-core'
import { assertChromium, CHROMIUM_LAUNCH, startLocalStack, type LocalStack } from '../browser/local-stack.ts'
import { TEST_OPERATOR_TOKEN } from '../helpers/test-secrets.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    /** the hub's address (http://127.0.0.1:port): test/browser/support.ts asks it for the shared stack and browser */
    browserHub: string
  }
}

/** What `GET /stack` answers: where the shared stack listens and the operator's token. */
export interface SharedStackInfo {
  ports: LocalStack['ports']
  portal: string
  dataDir: string
  operatorToken: string
  /** the edge's base URL of an account, `{public_id}` in place of its public id */
  edgeUrlTemplate: string
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function launchBrowserServer(): Promise<BrowserServer> {
  assertChromium()
  // imported here: a run without browser files never loads playwright in vitest's process
  const { chromium } = await import('playwright-core')
  return chromium.launchServer({ ...CHROMIUM_LAUNCH, host: '127.0.0.1' })
}

async function closeBrowserServer(browser: BrowserServer): Promise<void> {
  const pid = browser.process().pid
  const closed = await Promise.race([browser.close().then(() => true), sleep(10_000).then(() => false)])
  if (!closed && pid) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let stack: Promise<LocalStack> | undefined
  let browser: Promise<BrowserServer> | undefined
  const answer = async (path: string | undefined): Promise<unknown> => {
    if (path === '/stack') {
      // the tests' operator token (test/helpers/test-secrets.ts): the management harness's OPERATOR works on it
      stack ??= startLocalStack({ operatorToken: TEST_OPERATOR_TOKEN })
      const s = await stack
      return {
        ports: s.ports,
        portal: s.portal,
        dataDir: s.dataDir,
        operatorToken: s.credentials.operator_token,
        edgeUrlTemplate: s.credentials.edge_url.replace(`//${s.credentials.public_id}.`, '//{public_id}.'),
      } satisfies SharedStackInfo
    }
    if (path === '/chromium') {
      browser ??= launchBrowserServer()
      return { wsEndpoint: (await browser).wsEndpoint() }
    }
    return undefined
  }
  const server: Server = createServer((req, res) => {
    answer(req.url).then(
      (body) => {
        if (body === undefined) res.writeHead(404).end()
        else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
      },
      (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(err.message),
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  project.provide('browserHub', `http://127.0.0.1:${(server.address() as AddressInfo).port}`)

  return async () => {
    server.close()
    await Promise.all([stack?.then((s) => s.stop()).catch(() => {}), browser?.then(closeBrowserServer).catch(() => {})])
  }
}
