import { readDemoCredentials as readStackCredentials, type DemoCredentials } from '../../../scripts/lib/demo-tenant.ts'
import { npmStartArgs } from '../../../scripts/lib/local-stack.ts'
import { descendantsOf } from '../../../scripts/lib/process-tree.ts'
import { freePort, startNode, waitHealthy, type Spawned } from './processes.ts'

export interface StackPorts {
  edge: number
  portal: number
  worker: number
  dispatcher: number
}

/** The local stack (scripts/start-local.ts) on DATA_DIR with free ports. */
export async function allocatePorts(): Promise<StackPorts> {
  return { edge: await freePort(), portal: await freePort(), worker: await freePort(), dispatcher: await freePort() }
}

function stackEnv(dataDir: string, ports: StackPorts): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    EDGE_PORT: String(ports.edge),
    PORTAL_PORT: String(ports.portal),
    WORKER_PORT: String(ports.worker),
    UPSERT_WORKER_PORT: String(ports.worker),
    DISPATCHER_PORT: String(ports.dispatcher),
    WEBHOOK_DISPATCHER_PORT: String(ports.dispatcher),
    LOG_LEVEL: 'warn',
  }
}

export async function startStack(dataDir: string, ports: StackPorts): Promise<Spawned> {
  const p = startNode(npmStartArgs(), stackEnv(dataDir, ports))
  await waitHealthy(p, [ports.edge, ports.portal], 120_000)
  return p
}

/** SIGKILL to the stack and every process it started (collected by pid first, never by name). */
export async function killStack(p: Spawned): Promise<void> {
  const pids = [p.child.pid!, ...descendantsOf(p.child.pid!)]
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      /* gone */
    }
  }
  await p.exited
}

/** SIGTERM to the stack's root; SIGKILL to whatever is left after `graceMs`. */
export async function stopStack(p: Spawned, graceMs = 15_000): Promise<void> {
  if (p.exitedAt() !== null) return
  const pids = [p.child.pid!, ...descendantsOf(p.child.pid!)]
  try {
    process.kill(p.child.pid!, 'SIGTERM')
  } catch {
    /* gone */
  }
  const timer = setTimeout(() => {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        /* gone */
      }
    }
  }, graceMs)
  await p.exited
  clearTimeout(timer)
}

/** The demo tenant's credentials that start-local wrote (its own reader; fails when missing). */
export function readDemoCredentials(dataDir: string): DemoCredentials {
  const creds = readStackCredentials(dataDir)
  if (!creds) throw new Error(`${dataDir}/demo-credentials.json not written by start-local`)
  return creds
}
