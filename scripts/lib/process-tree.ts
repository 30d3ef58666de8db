import { readdirSync, readFileSync } from 'node:fs'

/** Every descendant pid of `root` (children, grandchildren, …), read from /proc. */
export function descendantsOf(root: number): number[] {
  const parentOf = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      // the command name may contain spaces and parentheses: fields follow the last ')'
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      parentOf.set(Number(entry), Number(fields[1]))
    } catch {
      // the process ended while we looked
    }
  }
  const out: number[] = []
  const queue = [root]
  while (queue.length > 0) {
    const p = queue.shift()!
    for (const [pid, ppid] of parentOf) {
      if (ppid === p) {
        out.push(pid)
        queue.push(pid)
      }
    }
  }
  return out
}

/** whether a process of that pid exists (signal 0) */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * Stops a process and its whole chain by pid: the gcloud wrapper starts java children that
 * outlive it (and `timeout`), so the tree is collected first and every member signalled.
 */
export function killTree(root: number, graceMs = 3000): Promise<void> {
  return killAll([root, ...descendantsOf(root)], graceMs)
}

/** SIGTERM to each pid, then SIGKILL to those still alive after `graceMs`. */
export async function killAll(pids: readonly number[], graceMs = 3000): Promise<void> {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGTERM')
    } catch {
      /* already gone */
    }
  }
  const deadline = Date.now() + graceMs
  while (Date.now() < deadline && pids.some(alive)) await new Promise((r) => setTimeout(r, 100))
  for (const pid of pids) {
    if (alive(pid)) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        /* already gone */
      }
    }
  }
}

/**
 * The processes whose environment holds `name=value`, this one excepted: what a run started,
 * however far down, also once its parent died and it was handed to init. A process that starts
 * its own session, as gcloud's emulators do, escapes the run's process group (a Ctrl-C), and a
 * tree walk once its parent is gone (a test worker that was killed), not its inherited environment.
 */
export function processesMarked(name: string, value: string): number[] {
  const entry = `${name}=${value}`
  const out: number[] = []
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(entry)) out.push(Number(pid))
    } catch {
      // another user's process, or one that ended while we looked
    }
  }
  return out
}
