import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino'
import { credentialHeaderPaths, REDACTED, redactText, redactUrl } from './redact.ts'
import { traceMixin } from './trace-scope.ts'

/**
 * pino in Cloud Logging's shape: `severity` instead of a numeric level, `message` instead of
 * `msg`; request lines carry `logging.googleapis.com/trace` and `…/spanId` (added per request
 * by the HTTP layer, shared/src/http/base-app.ts) and an `httpRequest` object. Credentials never
 * reach a line: credential headers are redacted wherever a logged object has `headers`, a
 * logged request's URL loses its credential query values, and the finished line passes the
 * policy's text rule (logging/redact.ts). Pretty output only
 * on an interactive terminal.
 */
const SEVERITY: Record<string, string> = {
  trace: 'DEBUG',
  debug: 'DEBUG',
  info: 'INFO',
  warn: 'WARNING',
  error: 'ERROR',
  fatal: 'CRITICAL',
}

/** fastify's request serializer, minus anything a caller can use to smuggle a credential into a log line */
function serializeRequest(req: { method?: string; url?: string; originalUrl?: string; ip?: string; host?: string; raw?: { url?: string } }) {
  // originalUrl: the target as sent, before the router's rewrite (http/request-target.ts, routableUrl)
  return { method: req.method, url: redactUrl(req.originalUrl ?? req.url ?? req.raw?.url), host: req.host, remoteIp: req.ip }
}

function loggerOptions(level: string, service: string): LoggerOptions {
  return {
    level,
    messageKey: 'message',
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: {
      level: (label) => ({ severity: SEVERITY[label] ?? 'DEFAULT' }),
    },
    serializers: { req: serializeRequest, err: pino.stdSerializers.err },
    redact: { paths: credentialHeaderPaths(), censor: REDACTED },
    // the rest of the policy on the finished line: a secret inside a message, an error's text, a URL anywhere
    hooks: { streamWrite: redactText },
    // lines written for a request through a logger other than the request's carry its trace too
    mixin: traceMixin,
  }
}

/**
 * The process logger. `destination`: where lines go (default stdout; tests pass a stream to read
 * them back). `tty`: whether stdout is a terminal (a worker thread's own stdout never is: it gets
 * the main thread's answer).
 */
export function createLogger(level: string, service: string, destination?: DestinationStream, tty = process.stdout.isTTY === true): Logger {
  const options = loggerOptions(level, service)
  if (destination) return pino(options, destination)
  if (tty && level !== 'silent' && process.env.NODE_ENV !== 'production') {
    options.transport = { target: 'pino-pretty', options: { messageKey: 'message', translateTime: 'SYS:HH:MM:ss.l' } }
  }
  return pino(options)
}

/**
 * Writes out what the logger still buffers (pino writes asynchronously), so that plain text
 * printed next comes after the log lines that preceded it.
 */
export function flushLoggerSync(logger: Logger): void {
  const stream = (logger as unknown as Record<symbol, { flushSync?: () => void } | undefined>)[pino.symbols.streamSym]
  stream?.flushSync?.()
}

export type { Logger }
