import { AsyncLocalStorage } from 'node:async_hooks'

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

export function withTraceFields<T>(fields: Readonly<Record<string, unknown>>, fn: () => T): T {
  return scope.run(fields, fn)
}

/** pino `mixin`: the fields of the request in scope, unless the logger is that request's own */
export function traceMixin(_merge: object, _level: number, logger?: unknown): Record<string, unknown> {
  if (logger && (logger as Record<symbol, unknown>)[REQUEST_SCOPED_LOGGER]) return {}
  const fields = scope.getStore()
  return fields ? { ...fields } : {}
}
