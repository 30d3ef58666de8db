import type { Readable } from 'node:stream'
import { request, type Dispatcher } from 'undici'
import type { SendResult } from '../../ports/webhook-sender.ts'
import { keptResponseHeaders } from './response-headers.ts'

export const SEND_TIMEOUT_MS = 15_000
export const MAX_RESPONSE_BYTES = 64 * 1024
export const EXCERPT_BYTES = 1024

const ignore = () => {}

/**
 * The first chunks of a body, until `max` bytes were read (the body is then destroyed), it ends,
 * or it fails (what was read before stays). Listeners rather than `for await`: the async iterator
 * cost a promise per chunk and its own stream plumbing on every delivery (createAsyncIterator and
 * eos, 0.8 % of a delivery's CPU), for bodies that are mostly one chunk.
 */
function readAtMost(body: Readable, max: number): Promise<Buffer[]> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    const done = () => {
      body.off('data', onData).off('end', done).off('error', done).off('close', done)
      // a body destroyed with an error later (the abort signal) has a listener: no uncaught 'error'
      body.on('error', ignore)
      resolve(chunks)
    }
    const onData = (chunk: Buffer) => {
      chunks.push(chunk)
      size += chunk.length
      if (size < max) return
      done()
      body.destroy()
    }
    body.on('data', onData).once('end', done).once('error', done).once('close', done)
  })
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
    const res = await request(url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'user-agent': 'lsv-webhooks/2026-09-04', ...headers },
      dispatcher,
      signal,
      headersTimeout: SEND_TIMEOUT_MS,
      bodyTimeout: SEND_TIMEOUT_MS,
    })
    const chunks = await readAtMost(res.body, MAX_RESPONSE_BYTES)
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
