/**
 * `npm start` (scripts/start-local.ts) in a child process, as a user runs it, for the tests of
 * the local stack. A clean environment (no OPERATOR_TOKEN or KEY_PEPPER, so the stack's own local
 * defaults apply) plus the data folder, the four ports and what the test adds. Every stack
 * started here is killed by pid when the file's tests end, so a failed assertion never leaves one
 * behind.
 */
import { afterAll } from 'vitest'
import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { localStackEnv, npmStartArgs, type LocalStackPorts } from '../../scripts/lib/local-stack.ts'

const ROOT = join(import.meta.dirname, '..', '..')

export type { LocalStackPorts }

export interface LocalStackProcess {
  child: ChildProcess
  /** stdout and stderr so far */
  output(): string
  exited: Promise<number | null>
}

const running = new Set<ChildProcess>()
afterAll(() => {
  for (const child of running) if (child.exitCode === null && child.pid) process.kill(child.pid, 'SIGKILL')
})

export function spawnLocalStack(dataDir: string, ports: LocalStackPorts, env: Record<string, string> = {}): LocalStackProcess {
  const child = spawn(process.execPath, npmStartArgs(), {
    cwd: ROOT,
    env: { ...localStackEnv(dataDir, ports), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.add(child)
  let output = ''
  child.stdout!.on('data', (d) => (output += d))
  child.stderr!.on('data', (d) => (output += d))
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      running.delete(child)
      resolve(code)
    }),
  )
  return { child, output: () => output, exited }
}
