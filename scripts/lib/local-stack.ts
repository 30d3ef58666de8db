import { freePort } from './free-port.ts'

/**
 * What a process that runs `npm start` (scripts/start-local.ts) as a child gives it: the tests of
 * the local stack and the benches that drive it (bench/embedded.ts, bench/latency.ts).
 */
export interface LocalStackPorts {
  edge: number
  portal: number
  worker: number
  dispatcher: number
}

/** four free loopback ports, one per service */
export async function freeLocalStackPorts(): Promise<LocalStackPorts> {
  return { edge: await freePort(), portal: await freePort(), worker: await freePort(), dispatcher: await freePort() }
}

/**
 * A clean environment for the stack (no OPERATOR_TOKEN or KEY_PEPPER, so its own local defaults
 * apply): PATH and HOME, the data folder, warnings only, and each service's port variable.
 */
export function localStackEnv(dataDir: string, ports: LocalStackPorts): Record<string, string | undefined> {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    EDGE_PORT: String(ports.edge),
    PORTAL_PORT: String(ports.portal),
    UPSERT_WORKER_PORT: String(ports.worker),
    WEBHOOK_DISPATCHER_PORT: String(ports.dispatcher),
  }
}
