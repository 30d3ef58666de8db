import { writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { Session } from 'node:inspector/promises'

/**
 * CPU profile of chosen sections of a bench only (not its set-up), when BENCH_CPU_PROFILE names
 * a folder: `section(name, fn)` profiles fn and writes `<folder>/<name>.cpuprofile` (open it in
 * Chrome DevTools, or summarize it). Without the variable it just runs fn.
 */
export function sectionProfiler(dir = process.env.BENCH_CPU_PROFILE) {
  return async function section<T>(name: string, fn: () => Promise<T>): Promise<T> {
    if (!dir) return fn()
    // a session per section: one left connected kept the embedded database's maintenance thread
    // from reporting its exit, and the bench from closing
    const session = new Session()
    session.connect()
    await session.post('Profiler.enable')
    await session.post('Profiler.setSamplingInterval', { interval: 200 })
    await session.post('Profiler.start')
    try {
      return await fn()
    } finally {
      const { profile } = await session.post('Profiler.stop')
      session.disconnect()
      mkdirSync(dir, { recursive: true })
      writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile))
    }
  }
}
