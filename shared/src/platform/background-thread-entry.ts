/**
 * Worker-thread entry (started by background-thread.ts): one service's background with adapters
 * of its own. Loads the service's `background` from its module (the service's background.ts, not
 * its app: a thread boots in a fraction of the time), builds deps from the configuration it was
 * given, starts the background as planned, and reports:
 *
 * - `{ kind: 'started' }` once running, or `{ kind: 'failed', message }` (then ends);
 * - `{ kind: 'health', health }` whenever its queue's health changes (checked every 500 ms from
 *   the adapter's kept state: its subscriptions claiming without error);
 * - `{ kind: 'closed' }` after `{ kind: 'close' }`: consumers closed (messages in flight finished
 *   and settled), adapters closed (the store's connection among them), log lines written out.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { createLogger, flushLoggerSync } from '../logging/logger.ts'
import type { PlatformDeps } from '../ports/deps.ts'
import { createPlatformDeps } from './deps.ts'
import { loadBackground, type Background } from './background.ts'
import type { HostMessage, ThreadData, ThreadHealth, ThreadMessage } from './background-thread.ts'
import { setTraceProject } from '../logging/trace-scope.ts'
import { startTelemetry, stopTelemetry } from './telemetry.ts'

const data = workerData as ThreadData
const port = parentPort!
const post = (message: ThreadMessage) => port.postMessage(message)
const logger = createLogger(data.config.logLevel, data.loggerName, undefined, data.tty).child({ thread: data.service })

let deps: PlatformDeps | null = null
let started: Background[] = []
let healthTimer: NodeJS.Timeout | null = null

async function release(): Promise<void> {
  if (healthTimer) clearInterval(healthTimer)
  for (const b of started.reverse()) await b.close().catch((err: unknown) => logger.error({ err }, 'closing a consumer failed'))
  started = []
  await deps?.close()
  await stopTelemetry()
  flushLoggerSync(logger)
}

port.on('message', (message: HostMessage) => {
  if (message.kind !== 'close') return
  void release().finally(() => {
    post({ kind: 'closed' })
    port.close()
  })
})

try {
  // a thread has an OpenTelemetry of its own (the SDK is per isolate): the messages it consumes
  // are handled in their publishers' traces (docs/operations.md, "Traces"), spans in a file of its own
  await startTelemetry(`${data.loggerName}-${data.service}`)
  setTraceProject(data.config.gcpProject)
  const background = await loadBackground(data.module)
  deps = await createPlatformDeps(data.config, logger, {}, { writeGate: { buffer: data.writeGate, role: 'background' } })
  started = await background(deps, data.plan)
  let last = ''
  const report = () => {
    const health: ThreadHealth = deps?.queue.health?.() ?? { ok: true }
    const text = JSON.stringify(health)
    if (text !== last) post({ kind: 'health', health })
    last = text
  }
  report()
  healthTimer = setInterval(report, 500)
  healthTimer.unref()
  post({ kind: 'started' })
} catch (err) {
  logger.error({ err }, 'background thread failed to start')
  await release().catch(() => {})
  post({ kind: 'failed', message: (err as Error).message })
  port.close()
}
