/**
 * A Cloud Tasks stand-in at the HTTP level (REST v2, what the client library's REST transport
 * sends): create, get, update and delete queues; create, get and delete tasks. Each task's
 * httpRequest is sent at its scheduleTime with an OIDC ID token for its oidcToken
 * (serviceAccountEmail, audience, or the URL when no audience is set) and the X-CloudTasks-*
 * headers; a non-2xx answer, no answer, or none within the task's dispatchDeadline (default
 * 10 min, 15 s to 30 min) is retried with the queue's backoff (minBackoff doubling maxDoublings
 * times, then growing linearly, capped at maxBackoff); a 429 or 503 with Retry-After is not
 * retried before it. A task is deleted once it was attempted maxAttempts times (-1: unlimited)
 * *and* maxRetryDuration passed since its first attempt (0: unlimited), as RetryConfig documents
 * ("stops retrying only when max_attempts and max_retry_duration are both satisfied"), and in
 * any case 31 days after it was created (the task retention limit). Dispatches per second and
 * concurrent dispatches follow the queue's rate limits. Task names stay taken for an hour after
 * the task ran or was deleted, as in Cloud Tasks ("~1 hour" for queues created through the API).
 * Cloud Tasks' own system throttling (a higher backoff after 429/503 or many errors, the ramp-up
 * of a new or idle queue) is not played: its rates are not documented.
 *
 * Each service calls on its own port, so calls are checked against the IAM grants infra/ declares
 * for its account (cloudtasks.queues.* / cloudtasks.tasks.create, and iam.serviceAccounts.actAs
 * on the account a task's token is minted for). Only loopback URLs are ever called. A task to a
 * Cloud Run service's URL meets Cloud Run's invoker check first (iam.ts, invokerRefusal): without
 * run.routes.invoke for the token's identity the attempt gets a 403 and is retried like any other
 * failure, and the service never sees it.
 *
 * The queue quota is played: past `maxQueues` queues (Cloud Tasks: 1,000 per region, default
 * queue included; small in tests) CreateQueue, and UpdateQueue of a queue that does not exist,
 * answer RESOURCE_EXHAUSTED, which the scheduler turns into QueueQuotaError (the pool takes over).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { listen, readJson, sendGoogleError, sendJson, type Listener } from './http.ts'
import { forwardedAuthorization, frontEndMark } from './front-end.ts'
import { invokerRefusal, type Iam } from './iam.ts'
import type { OidcIssuer } from './oidc-issuer.ts'

export interface RetryConfig {
  maxAttempts: number
  minBackoffMs: number
  maxBackoffMs: number
  maxDoublings: number
  maxRetryDurationMs: number
}
interface Queue {
  name: string
  rate: { maxDispatchesPerSecond: number; maxConcurrentDispatches: number }
  retry: RetryConfig
  tokens: number
  refilledAt: number
  running: number
}
interface Task {
  name: string
  queue: string
  url: string
  method: string
  headers: Record<string, string>
  body: Buffer
  oidc: { serviceAccountEmail: string; audience: string } | null
  dispatchDeadlineMs: number
  scheduleMs: number
  createMs: number
  firstAttemptMs: number | null
  dispatchCount: number
  responseCount: number
  running: boolean
}

interface TaskLogLine {
  time: string
  task: string
  url: string
  attempt: number
  status: number
  error?: string
  next?: string
}

export interface CloudTasksStandIn {
  listenFor(account: string): Promise<Listener>
  /** queues Terraform declares (google_cloud_tasks_queue), created before any service starts */
  declareQueue(path: string, rate: Queue['rate'] | null, retry: Partial<RetryConfig> | null): void
  close(): Promise<void>
}

/** HttpRequest tasks: dispatch deadline default 10 min, allowed 15 s to 30 min (Task.dispatch_deadline) */
const DEFAULT_DISPATCH_DEADLINE_MS = 600_000
const DISPATCH_DEADLINE_RANGE_MS = [15_000, 1_800_000] as const
/** the maximum task retention (Cloud Tasks quotas): a task is deleted this long after its creation */
const TASK_RETENTION_MS = 31 * 24 * 3_600_000
/** how long a name stays taken after its task ran or was deleted (CreateTask: "~1 hour") */
const NAME_REUSE_AFTER_MS = 3_600_000
const DEFAULT_RETRY: RetryConfig = { maxAttempts: 100, minBackoffMs: 100, maxBackoffMs: 3_600_000, maxDoublings: 16, maxRetryDurationMs: 0 }
const DEFAULT_RATE = { maxDispatchesPerSecond: 500, maxConcurrentDispatches: 1000 }
/** Cloud Tasks' default quota of queues per project and region */
const DEFAULT_MAX_QUEUES = 1000
const HTTP_METHODS = ['HTTP_METHOD_UNSPECIFIED', 'POST', 'GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']

/** proto3 JSON Duration ("1.5s") or the object form ({seconds, nanos}) → ms */
function durationMs(v: unknown): number | null {
  if (v === undefined || v === null) return null
  if (typeof v === 'string') {
    const m = /^(-?\d+(?:\.\d+)?)s$/.exec(v)
    if (!m) throw new Error(`bad duration ${v}`)
    return Number(m[1]) * 1000
  }
  if (typeof v === 'object') {
    const o = v as { seconds?: number | string; nanos?: number }
    return Number(o.seconds ?? 0) * 1000 + Number(o.nanos ?? 0) / 1e6
  }
  throw new Error(`bad duration ${String(v)}`)
}

/** proto3 JSON Timestamp (RFC 3339) or {seconds, nanos} → ms */
function timestampMs(v: unknown): number | null {
  if (v === undefined || v === null) return null
  if (typeof v === 'string') {
    const ms = Date.parse(v)
    if (Number.isNaN(ms)) throw new Error(`bad timestamp ${v}`)
    return ms
  }
  return durationMs(v)
}

/**
 * Retry-After of a 429/503 (delta-seconds or an HTTP date) in ms, null when absent or unreadable.
 * HttpRequest: on 429 or 503 "the retry specified in the Retry-After HTTP response header is
 * considered"; played as: the next attempt comes no sooner than it says.
 */
export function retryAfterOf(value: string | null, nowMs = Date.now()): number | null {
  if (!value) return null
  const v = value.trim()
  if (/^\d+$/.test(v)) return Number(v) * 1000
  const at = Date.parse(v)
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs)
}

/**
 * Why a task that just failed attempt `attempt` is deleted, or null while it is retried: both
 * retry limits reached (-1 attempts and 0 duration are unlimited), or the retention limit.
 */
export function exhaustion(retry: RetryConfig, t: { createMs: number; firstAttemptMs: number | null }, attempt: number, nowMs: number): string | null {
  if (nowMs - t.createMs >= TASK_RETENTION_MS) return 'task retention (31 days) reached'
  const attemptsDone = retry.maxAttempts !== -1 && attempt >= retry.maxAttempts
  const durationDone = retry.maxRetryDurationMs <= 0 || nowMs - (t.firstAttemptMs ?? nowMs) >= retry.maxRetryDurationMs
  // maxRetryDuration 0 means "task age unlimited": then maxAttempts alone decides
  if (retry.maxRetryDurationMs <= 0) return attemptsDone ? 'retries exhausted (maxAttempts)' : null
  return attemptsDone && durationDone ? 'retries exhausted (maxAttempts and maxRetryDuration)' : null
}

function isLoopbackUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname
    return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host)
  } catch {
    return false
  }
}

export interface CloudTasksStandInOptions {
  project: string
  issuer: OidcIssuer
  iam: Iam
  log: (line: TaskLogLine | Record<string, unknown>) => void
  /** the Cloud Run service a URL belongs to (its invoker grants apply), null for any other URL */
  cloudRunServiceAt(url: string): string | null
  /** queues the project may hold in the region (default 1,000, Cloud Tasks' default quota) */
  maxQueues?: number
  /** added as X-Local-Front-End to tasks for a Cloud Run service (front-end.ts) */
  frontEndSecret?: string | null
}

export function createCloudTasksStandIn(options: CloudTasksStandInOptions): CloudTasksStandIn {
  const { project, issuer, iam, log, cloudRunServiceAt } = options
  const maxQueues = options.maxQueues ?? DEFAULT_MAX_QUEUES
  const quotaSpent = (res: ServerResponse) =>
    sendGoogleError(
      res,
      'RESOURCE_EXHAUSTED',
      `Quota exceeded: the project has ${queues.size} queues in this location, the most it may hold (start:cloud plays a queue quota of ${maxQueues})`,
    )
  const queues = new Map<string, Queue>()
  const tasks = new Map<string, Task>()
  /** names of tasks that ran or were deleted, with when: not reusable for an hour (de-duplication window) */
  const spent = new Map<string, number>()
  const spend = (name: string) => spent.set(name, Date.now())
  const taken = (name: string) => {
    const at = spent.get(name)
    if (at !== undefined && Date.now() - at >= NAME_REUSE_AFTER_MS) spent.delete(name)
    return tasks.has(name) || spent.has(name)
  }
  const listeners: Listener[] = []
  let timer: NodeJS.Timeout | null = null
  let closed = false

  function retryOf(body: Record<string, unknown> | undefined, base: RetryConfig): RetryConfig {
    if (!body) return base
    const num = (v: unknown, fallback: number) => (v === undefined || v === null ? fallback : Number(v))
    const maxAttempts = num(body.maxAttempts, base.maxAttempts)
    if (!Number.isInteger(maxAttempts) || maxAttempts < -1) throw new Error(`retryConfig.maxAttempts must be an integer >= -1, not ${String(body.maxAttempts)}`)
    return {
      maxAttempts,
      minBackoffMs: durationMs(body.minBackoff) ?? base.minBackoffMs,
      maxBackoffMs: durationMs(body.maxBackoff) ?? base.maxBackoffMs,
      maxDoublings: num(body.maxDoublings, base.maxDoublings),
      maxRetryDurationMs: durationMs(body.maxRetryDuration) ?? base.maxRetryDurationMs,
    }
  }

  function rateOf(body: Record<string, unknown> | undefined, base: Queue['rate']): Queue['rate'] {
    if (!body) return base
    return {
      maxDispatchesPerSecond: body.maxDispatchesPerSecond === undefined ? base.maxDispatchesPerSecond : Number(body.maxDispatchesPerSecond),
      maxConcurrentDispatches: body.maxConcurrentDispatches === undefined ? base.maxConcurrentDispatches : Number(body.maxConcurrentDispatches),
    }
  }

  function queueJson(q: Queue): Record<string, unknown> {
    return {
      name: q.name,
      rateLimits: { ...q.rate, maxBurstSize: Math.max(1, Math.ceil(q.rate.maxDispatchesPerSecond)) },
      retryConfig: {
        maxAttempts: q.retry.maxAttempts,
        minBackoff: `${q.retry.minBackoffMs / 1000}s`,
        maxBackoff: `${q.retry.maxBackoffMs / 1000}s`,
        maxDoublings: q.retry.maxDoublings,
        maxRetryDuration: `${q.retry.maxRetryDurationMs / 1000}s`,
      },
      state: 'RUNNING',
    }
  }

  function taskJson(t: Task): Record<string, unknown> {
    return {
      name: t.name,
      httpRequest: { url: t.url, httpMethod: t.method, headers: t.headers, ...(t.oidc ? { oidcToken: t.oidc } : {}) },
      dispatchDeadline: `${t.dispatchDeadlineMs / 1000}s`,
      scheduleTime: new Date(t.scheduleMs).toISOString(),
      createTime: new Date(t.createMs).toISOString(),
      dispatchCount: t.dispatchCount,
      responseCount: t.responseCount,
      view: 'BASIC',
    }
  }

  function backoffMs(q: Queue, attempt: number): number {
    // attempt 1 failed → minBackoff; doubles maxDoublings times, then grows linearly; capped
    const { minBackoffMs: min, maxBackoffMs: max, maxDoublings } = q.retry
    const doublings = Math.min(attempt - 1, maxDoublings)
    const linear = Math.max(0, attempt - 1 - maxDoublings)
    const value = min * 2 ** doublings + linear * min * 2 ** maxDoublings
    return Math.min(max, value)
  }

  async function dispatch(t: Task, q: Queue): Promise<void> {
    t.running = true
    q.running++
    t.dispatchCount++
    t.firstAttemptMs ??= Date.now()
    const attempt = t.dispatchCount
    const headers: Record<string, string> = {
      ...t.headers,
      'user-agent': 'Google-Cloud-Tasks',
      'x-cloudtasks-queuename': q.name.split('/').pop()!,
      'x-cloudtasks-taskname': t.name.split('/').pop()!,
      'x-cloudtasks-taskretrycount': String(attempt - 1),
      'x-cloudtasks-taskexecutioncount': String(t.responseCount),
      'x-cloudtasks-tasketa': (t.scheduleMs / 1000).toFixed(6),
    }
    let status = 0
    let error: string | undefined
    let retryAfterMs: number | null = null
    const service = cloudRunServiceAt(t.url)
    Object.assign(headers, frontEndMark(service, options.frontEndSecret))
    // as the container behind Cloud Run's front end receives it: signature stripped (front-end.ts)
    if (t.oidc) headers.authorization = forwardedAuthorization(iam, service, await issuer.mint(t.oidc.serviceAccountEmail, t.oidc.audience))
    const refused = service === null ? null : invokerRefusal(iam, t.oidc?.serviceAccountEmail ?? null, service)
    if (refused) {
      // Cloud Run answers before the container: a response all the same (counted as one)
      status = 403
      error = refused
      t.responseCount++
    } else {
      try {
        const res = await fetch(t.url, {
          method: t.method,
          headers,
          ...(t.method === 'GET' || t.method === 'HEAD' ? {} : { body: new Uint8Array(t.body) }),
          signal: AbortSignal.timeout(t.dispatchDeadlineMs),
        })
        await res.arrayBuffer()
        status = res.status
        t.responseCount++
        if (status === 429 || status === 503) retryAfterMs = retryAfterOf(res.headers.get('retry-after'))
      } catch (err) {
        // past the dispatch deadline Cloud Tasks cancels the request: DEADLINE_EXCEEDED, retried
        error = (err as Error).name === 'TimeoutError' ? 'DEADLINE_EXCEEDED' : (err as Error).message
      }
    }
    q.running--
    t.running = false
    const base = { time: new Date().toISOString(), task: t.name, url: t.url, attempt, status, ...(error ? { error } : {}) }
    if (status >= 200 && status < 300) {
      tasks.delete(t.name)
      spend(t.name)
      log(base)
      return
    }
    if (!tasks.has(t.name)) return // deleted (or its queue) while it ran
    const why = exhaustion(q.retry, t, attempt, Date.now())
    if (why) {
      tasks.delete(t.name)
      spend(t.name)
      log({ ...base, next: `dropped: ${why}` })
      return
    }
    t.scheduleMs = Date.now() + Math.max(backoffMs(q, attempt), retryAfterMs ?? 0)
    log({ ...base, next: new Date(t.scheduleMs).toISOString() })
  }

  /** Starts every due task the queues' rate limits allow, then sleeps until the next one is due. */
  function tick(): void {
    timer = null
    if (closed) return
    const now = Date.now()
    let nextDue = Infinity
    for (const t of [...tasks.values()].sort((a, b) => a.scheduleMs - b.scheduleMs)) {
      if (t.running) continue
      if (t.scheduleMs > now) {
        nextDue = Math.min(nextDue, t.scheduleMs)
        continue
      }
      const q = queues.get(t.queue)
      if (!q) continue
      q.tokens = Math.min(Math.max(1, q.rate.maxDispatchesPerSecond), q.tokens + ((now - q.refilledAt) / 1000) * q.rate.maxDispatchesPerSecond)
      q.refilledAt = now
      if (q.tokens < 1 || q.running >= q.rate.maxConcurrentDispatches) {
        nextDue = Math.min(nextDue, now + Math.max(5, 1000 / Math.max(q.rate.maxDispatchesPerSecond, 0.001)))
        continue
      }
      q.tokens -= 1
      void dispatch(t, q).finally(schedule)
    }
    if (nextDue < Infinity) timer = setTimeout(tick, Math.max(0, Math.min(nextDue - Date.now(), 60_000)))
  }

  function schedule(): void {
    if (closed) return
    if (timer) clearTimeout(timer)
    timer = setTimeout(tick, 0)
  }

  function upsertQueue(path: string, body: Record<string, unknown>, existing: Queue | undefined): Queue {
    const q: Queue = existing ?? {
      name: path,
      rate: { ...DEFAULT_RATE },
      retry: { ...DEFAULT_RETRY },
      tokens: 1,
      refilledAt: Date.now(),
      running: 0,
    }
    q.rate = rateOf(body.rateLimits as Record<string, unknown> | undefined, q.rate)
    q.retry = retryOf(body.retryConfig as Record<string, unknown> | undefined, q.retry)
    queues.set(path, q)
    return q
  }

  const handle = (account: string) => async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://stand-in')
    const path = decodeURIComponent(url.pathname)
    const deny = (permission: string, resource: string) => {
      log({ time: new Date().toISOString(), denied: permission, resource, account })
      sendGoogleError(
        res,
        'PERMISSION_DENIED',
        `The principal (user or service account) lacks IAM permission "${permission}" for the resource "${resource}" (or the resource may not exist). [caller ${account}; start:cloud checks the IAM grants in infra/]`,
      )
    }
    const may = (permission: string, resource: string, p: string) => p === project && iam.allows(account, permission, resource)
    let m: RegExpExecArray | null

    if ((m = /^\/v2\/projects\/([^/]+)\/locations\/([^/]+)\/queues$/.exec(path)) && req.method === 'POST') {
      const [, p] = m as unknown as [string, string, string]
      const body = await readJson(req)
      const name = String(body.name ?? '')
      if (!name.startsWith(`${path.slice(4)}/`) || !/\/queues\/[A-Za-z0-9-]{1,100}$/.test(name))
        return sendGoogleError(res, 'INVALID_ARGUMENT', `bad queue name ${name}`)
      if (!may('cloudtasks.queues.create', `queue:${name.split('/').pop()}`, p)) return deny('cloudtasks.queues.create', name)
      if (queues.has(name)) return sendGoogleError(res, 'ALREADY_EXISTS', 'Queue already exists')
      if (queues.size >= maxQueues) return quotaSpent(res)
      return sendJson(res, 200, queueJson(upsertQueue(name, body, undefined)))
    }

    if ((m = /^\/v2\/(projects\/([^/]+)\/locations\/([^/]+)\/queues\/([^/]+))$/.exec(path))) {
      const [, name, p, , id] = m as unknown as [string, string, string, string, string]
      if (req.method === 'GET') {
        if (!may('cloudtasks.queues.get', `queue:${id}`, p)) return deny('cloudtasks.queues.get', name)
        const q = queues.get(name)
        return q ? sendJson(res, 200, queueJson(q)) : sendGoogleError(res, 'NOT_FOUND', 'Requested entity was not found.')
      }
      if (req.method === 'PATCH') {
        // UpdateQueue creates the queue when it does not exist
        const existing = queues.get(name)
        const permission = existing ? 'cloudtasks.queues.update' : 'cloudtasks.queues.create'
        if (!may(permission, `queue:${id}`, p)) return deny(permission, name)
        if (!existing && queues.size >= maxQueues) return quotaSpent(res)
        const body = await readJson(req)
        const mask = (url.searchParams.get('updateMask') ?? '').split(',').filter(Boolean)
        const masked: Record<string, unknown> = {}
        if (mask.length === 0) Object.assign(masked, body)
        for (const field of mask) {
          const [group, leaf] = field.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()).split('.') as [string, string | undefined]
          const source = body[group] as Record<string, unknown> | undefined
          if (!leaf) masked[group] = source
          else if (source && leaf in source) masked[group] = { ...(masked[group] as object | undefined), [leaf]: source[leaf] }
        }
        return sendJson(res, 200, queueJson(upsertQueue(name, masked, existing)))
      }
      if (req.method === 'DELETE') {
        if (!may('cloudtasks.queues.delete', `queue:${id}`, p)) return deny('cloudtasks.queues.delete', name)
        if (!queues.delete(name)) return sendGoogleError(res, 'NOT_FOUND', 'Requested entity was not found.')
        for (const t of tasks.values()) if (t.queue === name) tasks.delete(t.name)
        return sendJson(res, 200, {})
      }
    }

    if ((m = /^\/v2\/(projects\/([^/]+)\/locations\/([^/]+)\/queues\/([^/]+))\/tasks$/.exec(path)) && req.method === 'POST') {
      const [, queueName, p, , id] = m as unknown as [string, string, string, string, string]
      if (!may('cloudtasks.tasks.create', `queue:${id}`, p)) return deny('cloudtasks.tasks.create', queueName)
      const q = queues.get(queueName)
      if (!q) return sendGoogleError(res, 'NOT_FOUND', 'Requested entity was not found.')
      const body = await readJson(req)
      const task = (body.task ?? {}) as Record<string, unknown>
      const http = task.httpRequest as Record<string, unknown> | undefined
      if (!http) return sendGoogleError(res, 'INVALID_ARGUMENT', 'start:cloud implements HTTP targets only (task.httpRequest)')
      const target = String(http.url ?? '')
      if (!isLoopbackUrl(target))
        return sendGoogleError(res, 'INVALID_ARGUMENT', `start:cloud's Cloud Tasks stand-in calls only this machine; ${target} is not a loopback URL`)
      const oidcRaw = http.oidcToken as { serviceAccountEmail?: string; audience?: string } | undefined
      if (http.oauthToken) return sendGoogleError(res, 'INVALID_ARGUMENT', 'oauthToken is not implemented by start:cloud')
      const oidc = oidcRaw ? { serviceAccountEmail: String(oidcRaw.serviceAccountEmail ?? ''), audience: String(oidcRaw.audience || target) } : null
      if (oidc && !may('iam.serviceAccounts.actAs', `serviceAccount:${oidc.serviceAccountEmail}`, p)) {
        return deny('iam.serviceAccounts.actAs', `projects/-/serviceAccounts/${oidc.serviceAccountEmail}`)
      }
      const name = typeof task.name === 'string' && task.name ? task.name : `${queueName}/tasks/${Date.now()}${Math.random().toString().slice(2, 12)}`
      if (!name.startsWith(`${queueName}/tasks/`) || !/\/tasks\/[A-Za-z0-9_-]{1,500}$/.test(name))
        return sendGoogleError(res, 'INVALID_ARGUMENT', `bad task name ${name}`)
      if (taken(name)) return sendGoogleError(res, 'ALREADY_EXISTS', 'Requested entity already exists')
      const deadlineMs = durationMs(task.dispatchDeadline) ?? DEFAULT_DISPATCH_DEADLINE_MS
      if (deadlineMs < DISPATCH_DEADLINE_RANGE_MS[0] || deadlineMs > DISPATCH_DEADLINE_RANGE_MS[1])
        return sendGoogleError(res, 'INVALID_ARGUMENT', `dispatchDeadline must be between 15s and 1800s for HTTP tasks, not ${String(task.dispatchDeadline)}`)
      const method = typeof http.httpMethod === 'number' ? (HTTP_METHODS[http.httpMethod] ?? 'POST') : String(http.httpMethod ?? 'POST')
      const now = Date.now()
      const t: Task = {
        name,
        queue: queueName,
        url: target,
        method: method === 'HTTP_METHOD_UNSPECIFIED' ? 'POST' : method,
        headers: Object.fromEntries(Object.entries((http.headers ?? {}) as Record<string, string>).map(([k, v]) => [k.toLowerCase(), String(v)])),
        body: Buffer.from(String(http.body ?? ''), 'base64'),
        oidc,
        dispatchDeadlineMs: deadlineMs,
        scheduleMs: timestampMs(task.scheduleTime) ?? now,
        createMs: now,
        firstAttemptMs: null,
        dispatchCount: 0,
        responseCount: 0,
        running: false,
      }
      tasks.set(name, t)
      schedule()
      return sendJson(res, 200, taskJson(t))
    }

    if ((m = /^\/v2\/(projects\/([^/]+)\/locations\/([^/]+)\/queues\/([^/]+)\/tasks\/([^/]+))$/.exec(path))) {
      const [, name, p, , id] = m as unknown as [string, string, string, string, string]
      if (req.method === 'GET') {
        if (!may('cloudtasks.tasks.get', `queue:${id}`, p)) return deny('cloudtasks.tasks.get', name)
        const t = tasks.get(name)
        return t ? sendJson(res, 200, taskJson(t)) : sendGoogleError(res, 'NOT_FOUND', 'Requested entity was not found.')
      }
      if (req.method === 'DELETE') {
        if (!may('cloudtasks.tasks.delete', `queue:${id}`, p)) return deny('cloudtasks.tasks.delete', name)
        if (!tasks.delete(name)) return sendGoogleError(res, 'NOT_FOUND', 'Requested entity was not found.')
        spend(name)
        return sendJson(res, 200, {})
      }
    }
    sendGoogleError(res, 'NOT_FOUND', `start:cloud's Cloud Tasks stand-in does not implement ${req.method} ${path}`)
  }

  return {
    async listenFor(account) {
      const l = await listen(handle(account))
      listeners.push(l)
      return l
    },
    declareQueue(path, rate, retry) {
      upsertQueue(path, {}, undefined)
      const q = queues.get(path)!
      if (rate) q.rate = rate
      if (retry) q.retry = { ...q.retry, ...retry }
    },
    async close() {
      closed = true
      if (timer) clearTimeout(timer)
      await Promise.all(listeners.map((l) => l.close()))
    },
  }
}
