import { afterAll, describe, expect, it } from 'vitest'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { freePort } from '../../scripts/lib/free-port.ts'
import { npmStartArgs } from '../../scripts/lib/local-stack.ts'
import { tempDataDir } from '../helpers/embedded.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const execFileAsync = promisify(execFile)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const running = new Set<ChildProcess>()
const data = tempDataDir()

afterAll(() => {
  for (const child of running) if (child.exitCode === null && child.pid) process.kill(child.pid, 'SIGKILL')
  data.cleanup()
})

/** Starts `npm start`'s script on free ports, waits for its banner, stops it; returns the banner. */
async function startAndStop(
  ports: { edge: number; portal: number; worker: number; dispatcher: number },
  check: (banner: string) => Promise<void>,
): Promise<void> {
  const child = spawn(process.execPath, npmStartArgs(), {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: data.dir,
      LOG_LEVEL: 'warn',
      EDGE_PORT: String(ports.edge),
      PORTAL_PORT: String(ports.portal),
      UPSERT_WORKER_PORT: String(ports.worker),
      WEBHOOK_DISPATCHER_PORT: String(ports.dispatcher),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.add(child)
  let output = ''
  child.stdout!.on('data', (d) => (output += d))
  child.stderr!.on('data', (d) => (output += d))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  try {
    for (let i = 0; i < 600 && !output.includes('Stop with Ctrl-C.') && child.exitCode === null; i++) await sleep(100)
    expect(output, output).toContain('Stop with Ctrl-C.')
    await check(output)
  } finally {
    child.kill('SIGTERM')
    await Promise.race([exited, sleep(15_000)])
    if (child.exitCode === null && child.pid) process.kill(child.pid, 'SIGKILL')
    running.delete(child)
  }
}

/** The sign-in URL of the banner, on 127.0.0.1 (the stack listens on IPv4). */
function signInUrlOf(banner: string): string {
  const match = /^Sign in to the portal as the demo tenant[^\n]*\n\s+(\S+)$/m.exec(banner)
  expect(match, banner).not.toBeNull()
  return match![1]!.replace('//localhost:', '//127.0.0.1:')
}

describe('npm start prints a portal sign-in link for the demo tenant', () => {
  it('on first start and on the next (a new link each time); each signs a browser in once, and so does the command printed for another', async () => {
    const ports = { edge: await freePort(), portal: await freePort(), worker: await freePort(), dispatcher: await freePort() }
    const urls: string[] = []
    for (let run = 0; run < 2; run++) {
      await startAndStop(ports, async (banner) => {
        const url = signInUrlOf(banner)
        expect(url.startsWith(`http://127.0.0.1:${ports.portal}/portal/sign-in?token=`)).toBe(true)
        urls.push(url)
        // the banner's command for another link, run as printed in a shell of its own: no
        // OPERATOR_TOKEN, no PORTAL_PORT (the stack is on a free port, not 8081)
        const command = /another: ((?:DATA_DIR=\S+ )?npm run cli -- portal link [0-9a-f-]{36})\)/.exec(banner)?.[1]
        expect(command, banner).toBeDefined()
        const printed = await execFileAsync('sh', ['-c', command!], { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME }, timeout: 60_000 })
        const another = (JSON.parse(printed.stdout.slice(printed.stdout.indexOf('{'))) as { url: string }).url.replace('//localhost:', '//127.0.0.1:')
        expect(another.startsWith(`http://127.0.0.1:${ports.portal}/portal/sign-in?token=`)).toBe(true)
        expect((await fetch(another, { redirect: 'manual' })).status).toBe(303)
        const first = await fetch(url, { redirect: 'manual' })
        expect(first.status).toBe(303)
        const cookie = first.headers.getSetCookie()[0]!.split(';')[0]!
        const page = await fetch(`http://127.0.0.1:${ports.portal}/portal/`, { headers: { cookie } })
        expect(await page.text()).toContain('(account <code>demo</code>)')
        expect((await fetch(url, { redirect: 'manual' })).status).toBe(410)
      })
    }
    expect(urls[0]).not.toBe(urls[1])
  }, 120_000)
})
