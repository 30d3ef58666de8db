import { spawn, type ChildProcess } from 'node:child_process'
import { request } from 'node:http'
export { freePort } from '../../../scripts/lib/free-port.ts'

const NODE = new URL('../../../node_modules/.bin/node', import.meta.url).pathname
const REPO = new URL('../../../', import.meta.url).pathname

export interface Spawned {
  child: ChildProcess
  output(): string
  /** resolves with the exit code (or signal name) */
  exited: Promise<number | string>
  exitedAt(): number | null
}

/** Starts `node <script>` (or `node <args>`) from the repo root with `env` on top of a minimal environment. */
export function startNode(script: string | string[], env: Record<string, string>): Spawned {
  const child = spawn(NODE, [script].flat(), {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NODE_ENV: 'test', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout!.on('data', (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000)
  })
  child.stderr!.on('data', (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000)
  })
  let at: number | null = null
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => {
      at = Date.now()
      resolve(code ?? signal ?? -1)
    }),
  )
  return { child, output: () => out, exited, exitedAt: () => at }
}

/** GET `http://127.0.0.1:<port><path>` with a Host header; status or null on connection failure. */
function httpGet(port: number, path: string, host?: string): Promise<number | null> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', headers: host ? { host } : {}, timeout: 2000 }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? null))
    })
    req.on('error', () => resolve(null))
    req.on('timeout', () => {
      req.destroy()
      resolve(null)
    })
    req.end()
  })
}

/** Waits until GET /healthz answers 200 on every port (or the process exits, or the timeout). */
export async function waitHealthy(p: Spawned, ports: number[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (const port of ports) {
    for (;;) {
      if (p.exitedAt() !== null) throw new Error(`process exited before it was healthy:\n${p.output()}`)
      if ((await httpGet(port, '/healthz')) === 200) break
      if (Date.now() > deadline) throw new Error(`port ${port} not healthy within ${timeoutMs} ms:\n${p.output()}`)
      await new Promise((r) => setTimeout(r, 200))
    }
  }
}

/** Sends SIGKILL (or another signal) to the process only (never by name). */
export function signal(p: Spawned, sig: NodeJS.Signals): void {
  try {
    p.child.kill(sig)
  } catch {
    /* already gone */
  }
}
