/**
 * Preloaded into the stack by bench/embedded.ts (`--import`): how much CPU the main thread spends
 * per turn of the event loop, i.e. how long a request arriving mid-turn waits on an idle machine.
 * Wall-clock probe latency on a shared machine also counts the time the OS gives other
 * processes; the main thread's CPU per turn does not. A 1 ms timer chain fires at most once per
 * turn without spinning the loop; the main thread's CPU time between two firings is one turn's
 * work (or a few short ones). Every second a line `{ at, turns, long }` is appended to
 * BENCH_TURNS_FILE: the turns counted and the CPU ms of those that took 1 ms or more.
 *
 * Main thread only: a preload (`--import`) also runs in every worker thread the stack starts
 * (the embedded store's maintenance thread, the upsert worker's consumer thread), whose turns are
 * not what a probe waits for; counted too, an idle thread's many empty turns would dilute the p99.
 */
import { appendFileSync } from 'node:fs'
import { isMainThread } from 'node:worker_threads'

const file = process.env.BENCH_TURNS_FILE
if (file && isMainThread) {
  let turns = 0
  let long: number[] = []
  let last = process.threadCpuUsage()
  const tick = () => {
    const now = process.threadCpuUsage()
    const ms = (now.user + now.system - last.user - last.system) / 1000
    last = now
    turns++
    if (ms >= 1) long.push(Math.round(ms * 10) / 10)
    setTimeout(tick, 1).unref()
  }
  setTimeout(tick, 1).unref()
  setInterval(() => {
    appendFileSync(file, `${JSON.stringify({ at: Date.now(), turns, long })}\n`)
    turns = 0
    long = []
  }, 1000).unref()
}
