import type { PlatformDeps } from '../ports/deps.ts'
import type { Listeners } from '../ports/listeners.ts'
import { attemptLogListener } from '../domain/webhooks/listeners/attempt-log.ts'
import { healthCountersListener } from '../domain/webhooks/listeners/health-counters.ts'
import { latencyHistogramListener } from '../domain/webhooks/listeners/latency-histogram.ts'
import { endpointFailingListener } from '../domain/operations/endpoint-failing.ts'
import { queueLateListener } from '../domain/operations/queue-late.ts'
import { endpointAlertsListener } from '../domain/alerts/listener.ts'
import { pushLogListener } from '../domain/activity/push-log.ts'
import { pushActivityListener } from '../domain/activity/push-recorder.ts'
import { changeFeed } from '../domain/contacts/change-feed.ts'
import { batchLines } from '../domain/ingest/batch-lines.ts'
import { deadLetterCounts } from '../domain/activity/dead-letter-counts.ts'
import { pushOutcomes } from '../domain/activity/push-outcomes.ts'

/**
 * Who reacts to each outcome of the hot paths (ports/listeners.ts; docs/architecture.md,
 * "Outcomes and listeners"), in the order they are told. A new observer is one file (its
 * listener, with its failure contract) and one line here; the paths that produce the outcomes do
 * not change.
 */
export function createListeners(deps: PlatformDeps): Listeners {
  const health = healthCountersListener(deps)
  const pushLog = pushLogListener(deps)
  const activity = pushActivityListener(deps)
  const latency = latencyHistogramListener(deps)
  return {
    delivery: [attemptLogListener, health, latency, endpointFailingListener(deps)],
    push: [activity, pushLog],
    queueFallback: [queueLateListener(deps)],
    endpointHealth: [endpointAlertsListener(deps)],
    batch: [batchLines(deps), deadLetterCounts(deps), pushOutcomes(deps)],
    contactWritten: [changeFeed(deps)],
    async flush() {
      await Promise.all([health.flush(), latency.flush(), pushLog.flush(), activity.flush()])
    },
  }
}
