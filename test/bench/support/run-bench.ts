import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

const run = promisify(execFile)

/**
 * A bench script run the way `npm run bench:*` runs it (this node, the repository's root as the
 * working directory), with `env` over the test's environment; its stdout, where the benches print
 * their figures. A script that fails or outlives `timeoutMs` rejects with its output.
 */
export async function runBench(args: string[], env: Record<string, string>, options: { timeoutMs?: number; maxBufferBytes?: number } = {}): Promise<string> {
  const { stdout } = await run(process.execPath, args, {
    env: { ...process.env, ...env },
    timeout: options.timeoutMs ?? 150_000,
    maxBuffer: options.maxBufferBytes ?? 16 * 1024 * 1024,
  })
  return stdout
}
