/**
 * The black-box suite's clients: what a real caller of a running stack uses, nothing else.
 * - `http`: undici's fetch whose resolver answers `localhost` and `*.localhost` with 127.0.0.1,
 *   as curl and browsers do (RFC 6761 §6.3); the machine's resolver knows no `*.localhost`, so
 *   without this a client could not reach `<public_id>.edge.localhost` at all. Everything else
 *   goes through dns.lookup unchanged. The request carries the real Host header of the URL.
 * - `curl`: the curl binary, which resolves `*.localhost` to loopback by itself.
 * - `managementApp`: the management API over HTTP in the shape of fastify's `inject`, so the
 *   management tests' own helpers (test/management/harness.ts `ok`/`fails`) drive a running stack.
 */
import dns, { type LookupAddress, type LookupOptions } from 'node:dns'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { Agent, fetch as undiciFetch, type RequestInit } from 'undici'
import type { App } from '@lsv/shared/http/base-app.ts'

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

function lookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) {
    if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }])
    else callback(null, '127.0.0.1', 4)
    return
  }
  dns.lookup(hostname, options, callback as never)
}

const agent = new Agent({ connect: { lookup: lookup as never } })

export interface Answer {
  status: number
  headers: Headers
  text: string
  json(): any
}

export async function http(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await undiciFetch(url, { ...init, dispatcher: agent })
  const text = await res.text()
  return { status: res.status, headers: res.headers as unknown as Headers, text, json: () => JSON.parse(text) }
}

/** POST of a JSON value (or of a raw string, sent as is) with extra headers. */
export function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return http(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

/** curl with `args`; answers the status (from `-w`) and the body. */
export async function curl(args: string[]): Promise<{ status: number; body: string }> {
  const { stdout } = await promisify(execFile)('curl', ['-sS', '-w', '\n%{http_code}', ...args], { timeout: 60_000, maxBuffer: 1 << 20 })
  const cut = stdout.lastIndexOf('\n')
  return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) }
}

/** The management API of `portalUrl` over HTTP, shaped like fastify's inject. */
export function managementApp(portalUrl: string): App {
  const app = {
    async inject({ method, url, headers, payload }: { method: string; url: string; headers?: Record<string, string>; payload?: object }) {
      const res = await http(`${portalUrl}${url}`, {
        method,
        headers: { ...headers, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
      })
      return { statusCode: res.status, body: res.text, headers: Object.fromEntries(res.headers), json: res.json }
    },
  }
  return app as unknown as App
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Polls `probe` until it answers a value, or fails naming `what` after `timeoutMs`. */
export async function until<T>(what: string, probe: () => Promise<T | null | undefined>, timeoutMs = 60_000, everyMs = 300): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await probe()
    if (v !== null && v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`)
    await sleep(everyMs)
  }
}
