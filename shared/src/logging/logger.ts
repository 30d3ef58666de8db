import pino, { type Logger, type LoggerOptions } from 'pino'

/**
 * pino in Cloud Logging's shape: `severity` instead of a numeric level, `message` instead of
 * `msg`, and the trace id of `X-Cloud-Trace-Context` as `logging.googleapis.com/trace` (added
 * per request by the HTTP layer). Pretty output only on an interactive terminal.
 */
const SEVERITY: Record<string, string> = {
  trace: 'DEBUG', debug: 'DEBUG', info: 'INFO', warn: 'WARNING', error: 'ERROR', fatal: 'CRITICAL',
}

export function loggerOptions(level: string, service: string): LoggerOptions {
  const options: LoggerOptions = {
    level,
    messageKey: 'message',
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: {
      level: (label) => ({ severity: SEVERITY[label] ?? 'DEFAULT' }),
    },
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers["x-webhook-token"]', 'req.headers.cookie'],
      censor: '[redacted]',
    },
  }
  if (process.stdout.isTTY && level !== 'silent' && process.env.NODE_ENV !== 'production') {
    options.transport = { target: 'pino-pretty', options: { messageKey: 'message', translateTime: 'SYS:HH:MM:ss.l' } }
  }
  return options
}

export function createLogger(level: string, service: string): Logger {
  return pino(loggerOptions(level, service))
}

/**
 * Writes out what the logger still buffers (pino writes asynchronously), so that plain text
 * printed next comes after the log lines that preceded it.
 */
export function flushLoggerSync(logger: Logger): void {
  const stream = (logger as unknown as Record<symbol, { flushSync?: () => void } | undefined>)[pino.symbols.streamSym]
  stream?.flushSync?.()
}

/** `X-Cloud-Trace-Context: TRACE_ID/SPAN_ID;o=1` -> Cloud Logging trace field value */
export function traceFieldOf(header: string | undefined, project: string | null): Record<string, string> {
  if (!header || !project) return {}
  const traceId = header.split('/')[0]
  if (!traceId || !/^[0-9a-f]{32}$/i.test(traceId)) return {}
  return { 'logging.googleapis.com/trace': `projects/${project}/traces/${traceId}` }
}

export type { Logger }
