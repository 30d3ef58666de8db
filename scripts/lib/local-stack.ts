import { readFileSync } from 'node:fs'
import { join } from 'node:path'
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

/**
 * The arguments `npm start` gives node (package.json's `start` after `node`: its preloads, the
 * module compile cache's among them, then scripts/start-local.ts), so a test or bench that starts
 * the stack as a child (test/local, test/browser, test/blackbox, the reliability suite,
 * bench/embedded.ts, bench/latency.ts) runs what a user runs, from the repository's root.
 */
export function npmStartArgs(): string[] {
  const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { scripts: { start: string } }
  const [program, ...args] = pkg.scripts.start.trim().split(/\s+/)
  if (program !== 'node' || args.at(-1) !== 'scripts/start-local.ts')
    throw new Error(`package.json's start is not \`node … scripts/start-local.ts\`: ${pkg.scripts.start}`)
  return args
}
