import { LRUCache } from 'lru-cache'
import { request, type Dispatcher } from 'undici'
import type { SendResult } from '../../ports/webhook-sender.ts'
import { keptResponseHeaders } from './response-headers.ts'

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
 * once per URL (undici parsed it again on every send); null for a URL it would refuse (not
 * http(s), or no URL at all), which is then sent through `request(url)` to fail as it always did.
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
 * One POST of the exact body bytes. Redirects are not followed (plain undici `request`), the
 * whole exchange is bounded by 15 s, and at most 64 KiB of the answer is read: a receiver that
 * streams a large or endless body cannot hold the dispatcher.
 */
export async function postOnce(
  dispatcher: Dispatcher,
  url: string,
  body: Buffer,
  headers: Record<string, string>,
  now: () => number = Date.now,
): Promise<SendResult> {
  const started = now()
  // a timer cleared when the exchange ends, not AbortSignal.timeout: that one's timer cannot be
  // cleared, so every delivery left one to fire 15 s later (thousands pending at once)
  const deadline = new AbortController()
  const { signal } = deadline
  const timer = setTimeout(() => deadline.abort(), SEND_TIMEOUT_MS).unref()
  try {
    const options = {
      method: 'POST' as const,
      body,
      headers: { 'content-type': 'application/json', 'user-agent': 'lsv-webhooks/2026-09-04', ...headers },
      signal,
      headersTimeout: SEND_TIMEOUT_MS,
      bodyTimeout: SEND_TIMEOUT_MS,
    }
    const target = targetOf(url)
    const res = target ? await dispatcher.request({ ...options, ...target }) : await request(url, { ...options, dispatcher })
    const chunks: Buffer[] = []
    let size = 0
    try {
      for await (const chunk of res.body) {
        const buf = chunk as Buffer
        chunks.push(buf)
        size += buf.length
        if (size >= MAX_RESPONSE_BYTES) break // leaving the loop destroys the stream
      }
    } catch {
      // a body that fails mid-way still leaves the status we got
    }
    if (size >= MAX_RESPONSE_BYTES) res.body.destroy()
    const text = Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8')
    const retryAfter = res.headers['retry-after']
    return {
      statusCode: res.statusCode,
      error: null,
      latencyMs: now() - started,
      excerpt: text.length ? text : null,
      retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
      headers: keptResponseHeaders(res.headers),
    }
  } catch (err) {
    const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } }
    const code = e.cause?.code ?? e.code
    const msg =
      code === 'ERR_DESTINATION_NOT_ALLOWED' || e.cause?.code === 'ERR_DESTINATION_NOT_ALLOWED'
        ? 'destination address not allowed'
        : signal.aborted
          ? 'timeout'
          : (code ?? 'request failed')
    return { statusCode: null, error: msg, latencyMs: now() - started, excerpt: null, retryAfter: undefined }
  } finally {
    clearTimeout(timer)
  }
}
