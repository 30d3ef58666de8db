import { createHash } from 'node:crypto'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import Fastify from 'fastify'
import apiReference from '@scalar/fastify-api-reference'
import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * Scalar's script (4.35 MB), served by the API reference page to anyone (issue 31: 200 GETs
 * moved 870 MB, uncompressed and uncached). Here it is:
 * - compressed once per process and encoding (brotli 1.1 MB, gzip 1.3 MB), on the first request
 *   that accepts it, off the event loop, and kept; never compressed per request, which would let
 *   anonymous GETs spend the CPU instead of the bandwidth. (Hence not @fastify/compress, which
 *   compresses every answer.) Brotli at quality 5: 11 takes about a minute for a few % less;
 * - named by its content: the page loads `/docs/js/scalar.js?v=<sha-256 prefix>`, answered with
 *   `Cache-Control: public, max-age=31536000, immutable`; a new Scalar gives a new URL. The plain
 *   URL (or an old version) is answered too, `no-cache` with an ETag, so nothing stale is kept.
 *
 * The bytes are whatever @scalar/fastify-api-reference serves (it does not export them): read
 * once from the plugin registered on a scratch instance.
 */
export const SCRIPT_PATH = '/docs/js/scalar.js'
const IMMUTABLE = 'public, max-age=31536000, immutable'
const BROTLI_QUALITY = 5

type Encoding = 'br' | 'gzip' | 'identity'

interface ScriptAsset {
  version: string
  identity: Buffer
  encoded: Map<Encoding, Promise<Buffer>>
}

let asset: Promise<ScriptAsset> | undefined

async function loadScript(): Promise<ScriptAsset> {
  const scratch = Fastify()
  await scratch.register(apiReference, { routePrefix: '/docs', configuration: { url: '/openapi.json' } })
  const res = await scratch.inject({ method: 'GET', url: SCRIPT_PATH })
  await scratch.close()
  if (res.statusCode !== 200) throw new Error(`the API reference script answered ${res.statusCode}`)
  const identity = res.rawPayload
  const version = createHash('sha256').update(identity).digest('base64url').slice(0, 16)
  return { version, identity, encoded: new Map([['identity', Promise.resolve(identity)]]) }
}

/** The script and its version (memoized per process; a failure is retried by the next caller). */
export function apiReferenceScript(): Promise<ScriptAsset> {
  asset ??= loadScript().catch((err: unknown) => {
    asset = undefined
    throw err
  })
  return asset
}

function encode(script: ScriptAsset, encoding: Encoding): Promise<Buffer> {
  let bytes = script.encoded.get(encoding)
  if (!bytes) {
    bytes =
      encoding === 'br'
        ? promisify(brotliCompress)(script.identity, {
            params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: script.identity.length },
          })
        : promisify(gzip)(script.identity, { level: 9 })
    bytes.catch(() => script.encoded.delete(encoding))
    script.encoded.set(encoding, bytes)
  }
  return bytes
}

/** br, else gzip, else the bytes as they are, as Accept-Encoding allows (a `q=0` refuses) */
function negotiate(acceptEncoding: string | undefined): Encoding {
  const accepted = new Set<string>()
  for (const item of (acceptEncoding ?? '').toLowerCase().split(',')) {
    const [name, ...params] = item.split(';').map((p) => p.trim())
    const q = params.find((p) => p.startsWith('q='))
    if (name && !(q && Number(q.slice(2)) === 0)) accepted.add(name)
  }
  if (accepted.has('br')) return 'br'
  if (accepted.has('gzip')) return 'gzip'
  return 'identity'
}

/** Answers a request for the script (any `v`); the page names the current `v`. */
export async function sendApiReferenceScript(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const script = await apiReferenceScript()
  const current = (request.query as { v?: unknown }).v === script.version
  const etag = `"${script.version}"`
  reply.header('vary', 'accept-encoding')
  reply.header('etag', etag)
  reply.header('cache-control', current ? IMMUTABLE : 'no-cache')
  if (request.headers['if-none-match'] === etag) return reply.code(304).send()
  const encoding = negotiate(request.headers['accept-encoding'])
  if (encoding !== 'identity') reply.header('content-encoding', encoding)
  return reply
    .code(200)
    .type('application/javascript; charset=utf-8')
    .send(await encode(script, encoding))
}
