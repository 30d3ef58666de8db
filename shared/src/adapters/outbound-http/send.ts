import type { IncomingHttpHeaders } from 'node:http'
import { LRUCache } from 'lru-cache'
import { errors, type Dispatcher } from 'undici'
import type { SendResult } from '../../ports/webhook-sender.ts'
import { keptResponseHeaders } from './response-headers.ts'
import { createDeadlines, type Deadlines, type Expiring } from './deadlines.ts'

export const SEND_TIMEOUT_MS = 15_000
export const MAX_RESPONSE_BYTES = 64 * 1024
export const EXCERPT_BYTES = 1024

/** where undici sends a URL: its origin and request target (the path and query; a fragment is never sent) */
interface Target {
  origin: string
  path: string
}
/** per URL, the most recently used kept: every delivery to an endpoint names the same URL */
const targets = new LRUCache<string, Target>({ max: 1000 })

/**
 * The origin and request target of an http(s) URL, as undici's `request(url)` derives them, parsed
 * once per URL (undici parsed it again on every send); null for a URL undici refuses (not http(s),
 * or no URL at all).
 */
export function targetOf(url: string): Target | null {
  const known = targets.get(url)
  if (known) return known
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return null
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null
  const target = { origin: parsed.origin, path: parsed.search ? `${parsed.pathname}${parsed.search}` : parsed.pathname }
  targets.set(url, target)
  return target
}

/**
 * The whole-exchange bound every send shares: one sweep for all sends under way, not a timer and
 * an AbortController per send (that deadline alone cost a delivery about 50 µs of main-thread CPU:
 * docs/performance.md, "Eighth pass" and "Ninth pass").
 */
const sendDeadlines: Deadlines = createDeadlines({ boundMs: SEND_TIMEOUT_MS })

/** the code undici gives a URL it refuses (what `request(url)` failed such a send with) */
const REFUSED_URL = new errors.InvalidArgumentError('invalid url').code

/**
 * One exchange as undici's dispatch handler: the answer's status and headers, and at most
 * MAX_RESPONSE_BYTES of its body, collected without a stream. It settles once: on the answer's
 * end, at the read cap, on an error, or at its deadline, whichever comes first; at the cap and
 * the deadline it hangs up.
 */
class Exchange implements Dispatcher.DispatchHandler, Expiring {
  private controller: Dispatcher.DispatchController | null = null
  private statusCode = 0
  private headers: IncomingHttpHeaders | null = null
  private readonly chunks: Buffer[] = []
  private size = 0
  private settled = false
  private expired = false

  private readonly started: number
  private readonly now: () => number
  private readonly deadlines: Deadlines
  private readonly settle: (result: SendResult) => void

  constructor(started: number, now: () => number, deadlines: Deadlines, settle: (result: SendResult) => void) {
    this.started = started
    this.now = now
    this.deadlines = deadlines
    this.settle = settle
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // a send that waited in the pool's queue past its deadline is already answered: hang up
    if (this.expired) controller.abort(new errors.RequestAbortedError('timeout'))
    else this.controller = controller
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return // an informational answer (100 Continue…); the final one follows
    this.statusCode = statusCode
    this.headers = headers
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return
    this.chunks.push(chunk)
    this.size += chunk.length
    if (this.size < MAX_RESPONSE_BYTES) return
    this.answered()
    controller.abort(new errors.RequestAbortedError('response read cap'))
  }

  onResponseEnd(): void {
    this.answered()
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    // a body that fails mid-way still leaves the status we got
    if (this.headers) this.answered()
    else this.failed(err)
  }

  /** the deadline passed: what arrived by now is the answer, and the connection is dropped */
  expire(): void {
    this.expired = true
    if (this.headers) this.answered()
    else this.failed(null)
    this.controller?.abort(new errors.RequestAbortedError('timeout'))
  }

  private answered(): void {
    if (this.settled) return
    this.settled = true
    this.deadlines.remove(this)
    const headers = this.headers ?? {}
    const text = (this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks)).subarray(0, EXCERPT_BYTES).toString('utf8')
    const retryAfter = headers['retry-after']
    this.settle({
      statusCode: this.statusCode,
      error: null,
      latencyMs: this.now() - this.started,
      excerpt: text.length ? text : null,
      retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
      headers: keptResponseHeaders(headers),
    })
  }

  /** no answer: `err` null is the deadline */
  failed(err: unknown): void {
    if (this.settled) return
    this.settled = true
    this.deadlines.remove(this)
    this.settle({
      statusCode: null,
      error: err === null ? 'timeout' : failureOf(err),
      latencyMs: this.now() - this.started,
      excerpt: null,
      retryAfter: undefined,
    })
  }
}

/** what an attempt records for a send that got no answer */
function failureOf(err: unknown): string {
  const e = err as { code?: string; cause?: { code?: string } }
  const code = e.cause?.code ?? e.code
  return code === 'ERR_DESTINATION_NOT_ALLOWED' ? 'destination address not allowed' : (code ?? 'request failed')
}

/**
 * One POST of the exact body bytes. Redirects are not followed (a plain undici dispatch), the
 * whole exchange is bounded by 15 s (`deadlines`), and at most 64 KiB of the answer is read: a
 * receiver that streams a large or endless body cannot hold the dispatcher.
 */
export function postOnce(
  dispatcher: Dispatcher,
  url: string,
  body: Buffer,
  headers: Record<string, string>,
  deadlines: Deadlines = sendDeadlines,
  now: () => number = Date.now,
): Promise<SendResult> {
  const started = now()
  const target = targetOf(url)
  if (!target) return Promise.resolve({ statusCode: null, error: REFUSED_URL, latencyMs: 0, excerpt: null, retryAfter: undefined })
  return new Promise<SendResult>((settle) => {
    const exchange = new Exchange(started, now, deadlines, settle)
    deadlines.add(exchange)
    try {
      dispatcher.dispatch(
        {
          ...target,
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json', 'user-agent': 'lsv-webhooks/2026-09-04', ...headers },
          headersTimeout: SEND_TIMEOUT_MS,
          bodyTimeout: SEND_TIMEOUT_MS,
        },
        exchange,
      )
    } catch (err) {
      // invalid options (a header value undici refuses…) throw before anything is sent
      exchange.failed(err)
    }
  })
}
