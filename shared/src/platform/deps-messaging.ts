import type { Logger } from 'pino'
import type { PlatformConfig } from '../config/config.ts'
import type { Clock } from '../model/clock.ts'
import type { Queue } from '../ports/queue.ts'
import type { TaskScheduler } from '../ports/task-scheduler.ts'
import { standInClientOptions } from '../adapters/google/stand-in-client.ts'
import type { StoreBuild } from './deps-stores.ts'

/** The queue QUEUE_BACKEND selects: Pub/Sub (or its emulator), or the embedded file's. */
export async function buildQueue(config: PlatformConfig, logger: Logger, clock: Clock, build: StoreBuild): Promise<Queue> {
  if (config.queueBackend !== 'pubsub') return (await import('../adapters/embedded/queue.ts')).createEmbeddedQueue(await build.embedded(), { clock, logger })
  const { PubSub } = await import('@google-cloud/pubsub')
  // its own spans (publish, and `googclient_traceparent` on each message: logging/trace-propagation.ts)
  const pubsub = new PubSub({ projectId: config.gcpProject, enableOpenTelemetryTracing: true })
  return (await import('../adapters/google/pubsub-queue.ts')).createPubSubQueue(pubsub, {
    logger,
    // the emulator starts empty; in Google Cloud, Terraform owns topics and subscriptions, and
    // so it does in the deployed shape on this machine (LOCAL_WIRING: start:cloud creates them
    // from infra/): a publisher must not add pull subscriptions nobody reads
    createMissing: config.emulatorHosts.pubsub !== null && !config.localWiring,
    ...(config.pubsubNamePrefix ? { namePrefix: config.pubsubNamePrefix } : {}),
  })
}

/** The task scheduler TASKS_BACKEND selects: Cloud Tasks (or its stand-in), or the embedded file's. */
export async function buildTasks(config: PlatformConfig, logger: Logger, clock: Clock, build: StoreBuild): Promise<TaskScheduler> {
  if (config.tasksBackend !== 'cloudtasks') {
    return (await import('../adapters/embedded/task-scheduler.ts')).createEmbeddedTaskScheduler(await build.embedded(), { clock, logger })
  }
  const { CloudTasksClient } = await import('@google-cloud/tasks')
  const host = config.emulatorHosts.cloudTasks
  const client = new CloudTasksClient(host ? await standInClientOptions(host) : {})
  build.closers.push(() => client.close())
  // every task, whoever creates it (dispatcher, portal-api's replay), calls the dispatcher's
  // task route with the identity and audience that route checks (taskCallers)
  return (await import('../adapters/google/cloud-tasks-scheduler.ts')).createCloudTasksScheduler(client, {
    project: config.gcpProject,
    location: config.gcpRegion,
    targetUrl: `${config.dispatcherUrl}/tasks/deliver`,
    serviceAccountEmail: config.tasksServiceAccount,
    audience: config.dispatcherUrl,
  })
}
