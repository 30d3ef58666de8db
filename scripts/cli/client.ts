import { CliError } from './types.ts'

/** The API's failure envelope, with `issues` on a validation failure. */
interface ErrorEnvelope {
  ok: false
  error: string
  issues?: Array<{ path: string; message: string; code?: string }>
}

/** A failed API call: the message is the API's own `error` text (plus issues). */
export class ApiError extends Error {
  override name = 'ApiError'
  readonly status: number
  readonly issues: ErrorEnvelope['issues']
  constructor(status: number, message: string, issues?: ErrorEnvelope['issues']) {
    super(message)
    this.status = status
    this.issues = issues
  }
}

export type Query = Record<string, string | number | boolean | undefined>

/** The management API over HTTP (global fetch), with the operator token on every call. */
export class PortalClient {
  readonly baseUrl: string
  readonly #token: string

  constructor(baseUrl: string, token: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, '')
    this.#token = token
  }

  /** `path` is relative to `/api/v1/admin`; ids are URL-encoded by the caller through `seg`. */
  async request(method: string, path: string, body?: unknown, query: Query = {}): Promise<unknown> {
    const url = new URL(`${this.baseUrl}/api/v1/admin${path}`)
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v))
    const headers: Record<string, string> = { authorization: `Bearer ${this.#token}`, accept: 'application/json' }
    // no content-type without a body: an empty JSON body is a 400 `invalid JSON body`
    if (body !== undefined) headers['content-type'] = 'application/json'
    let res: Response
    try {
      res = await fetch(url, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause
      throw new CliError(`cannot reach the portal at ${this.baseUrl} (${cause?.code ?? cause?.message ?? (err as Error).message}); set PORTAL_URL or --portal`)
    }
    const text = await res.text()
    let parsed: unknown = null
    if (text !== '') {
      try {
        parsed = JSON.parse(text)
      } catch {
        parsed = text
      }
    }
    if (!res.ok) {
      const envelope = parsed as Partial<ErrorEnvelope> | null
      const message = envelope && typeof envelope === 'object' && typeof envelope.error === 'string' ? envelope.error : `HTTP ${res.status}`
      throw new ApiError(res.status, message, envelope && typeof envelope === 'object' ? envelope.issues : undefined)
    }
    // 204 and 202 carry nothing the operator needs beyond "it worked"
    return parsed ?? { ok: true }
  }
}

/** One URL path segment. */
export function seg(value: string): string {
  return encodeURIComponent(value)
}
