import { AsyncLocalStorage } from 'node:async_hooks'
import { traceLogFields } from './trace.ts'
import { activeTraceContext } from './trace-propagation.ts'

/**
 * The request id and trace fields of the request being handled, for lines logged through a logger that is not
 * the request's own (`deps.logger` in domain code: webhook deliveries on /tasks/deliver, the
 * ingest and link domain, …). The HTTP layer runs each request's lifecycle inside `withTraceFields`
 * (shared/src/http/base-app.ts) and every logger's `mixin` adds the fields to a line written in
 * that scope. A request's own child logger carries them as bindings already and is marked, so its
 * lines do not get them twice.
 */
const scope = new AsyncLocalStorage<Readonly<Record<string, unknown>>>()

export const REQUEST_SCOPED_LOGGER: unique symbol = Symbol.for('lsv.request-scoped-logger')

/**
 * The project Cloud Logging's trace names need (`projects/<project>/traces/<id>`), set once by the
 * composition root; null (no project): lines carry no trace, as traceLogFields decides.
 */
let traceProject: string | null = null

export function setTraceProject(project: string | null): void {
  traceProject = project
}

export function withTraceFields<T>(fields: Readonly<Record<string, unknown>>, fn: () => T): T {
  return scope.run(fields, fn)
}

/**
 * pino `mixin`: the fields of the request in scope, unless the logger is that request's own; and
 * the trace of the active OpenTelemetry span when there is one (a message or task handled inside
 * a request belongs to the publisher's trace, not the push request's: logging/trace-propagation.ts),
 * so a line's `logging.googleapis.com/trace` is the trace its span is exported in.
 */
export function traceMixin(_merge: object, _level: number, logger?: unknown): Record<string, unknown> {
  if (logger && (logger as Record<symbol, unknown>)[REQUEST_SCOPED_LOGGER]) return {}
  const fields = scope.getStore()
  return { ...fields, ...traceLogFields(activeTraceContext(), traceProject) }
}
