import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { spawn, type ChildProcess } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freeLocalStackPorts, localStackEnv, npmStartArgs, type LocalStackPorts } from '../../scripts/lib/local-stack.ts'
import type { DemoCredentials } from '../../scripts/lib/demo-tenant.ts'

const ROOT = join(import.meta.dirname, '..', '..')
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Debian's Chromium, never a browser playwright would download. */
const CHROMIUM = '/usr/bin/chromium'

/** Missing Chromium fails the suite (never skips it) and says how to install it (.ci/run does it before `npm test`). */
export function assertChromium(): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: the portal's browser tests need Debian's Chromium. Install it with: apt-get update && apt-get install -y chromium`)
  }
}

/** How every browser of the suite runs: headless, no sandbox (containers), nothing fetched in the background. */
export const CHROMIUM_LAUNCH = {
  executablePath: CHROMIUM,
  headless: true,
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
}

export interface LocalStack {
  ports: LocalStackPorts
  /** the tenant this file uses: the stack's demo tenant, or one of its own on the shared stack */
  credentials: DemoCredentials
  portal: string
  /** the stack's DATA_DIR (its alert emails are files in `alert-mail/` there) */
  dataDir: string
  output(): string
  /** stops a stack this file started; on the shared stack, nothing (the suite's set-up stops it) */
  stop(): Promise<void>
}

/**
 * `npm start`'s script on free ports and a fresh data folder; resolves once every service answers.
 * `operatorToken`: the stack's OPERATOR_TOKEN (else it generates one into its data folder).
 */
export async function startLocalStack(options: { operatorToken?: string } = {}): Promise<LocalStack> {
  const ports = await freeLocalStackPorts()
  const dataDir = mkdtempSync(join(tmpdir(), 'lsv-browser-data-'))
  const child: ChildProcess = spawn(process.execPath, npmStartArgs(), {
    cwd: ROOT,
    env: { ...localStackEnv(dataDir, ports), ...(options.operatorToken ? { OPERATOR_TOKEN: options.operatorToken } : {}) },
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
