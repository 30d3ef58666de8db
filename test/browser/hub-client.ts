import { inject } from 'vitest'
import type { SharedStackInfo } from '../setup/browser-hub.ts'

/**
 * Asks the run's hub (test/setup/browser-hub.ts) for the shared `npm start` stack or Chromium,
 * started by the first file that asks; a start that failed throws here, and so fails the file.
 */
export async function fromHub<P extends '/stack' | '/chromium'>(path: P): Promise<P extends '/stack' ? SharedStackInfo : { wsEndpoint: string }> {
  const hub = inject('browserHub')
  if (!hub) throw new Error('no browser hub: run these tests with vitest.config.ts (its globalSetup test/setup/browser-hub.ts)')
  const res = await fetch(`${hub}${path}`)
  if (res.status !== 200) throw new Error(`the shared ${path.slice(1)} did not start: ${await res.text()}`)
  return (await res.json()) as P extends '/stack' ? SharedStackInfo : { wsEndpoint: string }
}
