/**
 * The Firestore and Pub/Sub emulators the test command starts (scripts/lib/emulators.ts) run
 * their JVMs without the C2 compiler and with the serial collector: over a test run the default
 * JVMs spent more CPU compiling than answering (measured in scripts/lib/emulators.ts). Read from
 * the running emulators themselves: the java process serving each emulator's port has the options
 * in its environment and no C2 compiler thread. A caller asking for the JVM's defaults (the
 * benchmarks) and a caller whose environment sets JAVA_TOOL_OPTIONS keep theirs.
 */
import { describe, expect, it } from 'vitest'
import { readdirSync, readFileSync } from 'node:fs'
import { emulatorEnv } from '../../scripts/lib/emulators.ts'
import { emulators } from '../helpers/embedded.ts'

/** pid of the java process listening on the port of `hostPort` (its command line names the port) */
function javaServing(hostPort: string): number | null {
  const port = hostPort.split(':').at(-1)
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')
      if (/(^|\/)java$/.test(args[0]!) && args.includes(`--port=${port}`)) return Number(entry)
    } catch {
      // ended while we looked
    }
  }
  return null
}

const threadNames = (pid: number) => readdirSync(`/proc/${pid}/task`).map((tid) => readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim())

describe('the emulators’ JVMs', () => {
  it.skipIf(!emulators.firestore || !emulators.pubsub)('the running emulators run C1 only, with the serial collector', () => {
    for (const hostPort of [emulators.firestore!, emulators.pubsub!]) {
      const pid = javaServing(hostPort)
      expect(pid, `the java process of the emulator on ${hostPort}`).not.toBeNull()
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')
      expect(environ).toContain('JAVA_TOOL_OPTIONS=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC')
      const threads = threadNames(pid!)
      expect(
        threads.some((t) => t.startsWith('C1 CompilerThre')),
        threads.join(', '),
      ).toBe(true)
      expect(threads.filter((t) => t.startsWith('C2 CompilerThre'))).toEqual([])
    }
  })

  it("a caller asking for the JVM's defaults, or setting JAVA_TOOL_OPTIONS itself, keeps them", () => {
    expect(emulatorEnv({ PATH: '/bin' })).toEqual({
      PATH: '/bin',
      CLOUDSDK_CORE_DISABLE_PROMPTS: '1',
      JAVA_TOOL_OPTIONS: '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC',
    })
    expect(emulatorEnv({ PATH: '/bin' }, { jvmDefaults: true })).toEqual({ PATH: '/bin', CLOUDSDK_CORE_DISABLE_PROMPTS: '1' })
    expect(emulatorEnv({ JAVA_TOOL_OPTIONS: '-Xmx1g' }).JAVA_TOOL_OPTIONS).toBe('-Xmx1g')
  })
})
