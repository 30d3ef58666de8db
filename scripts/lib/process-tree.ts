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

function alive(pid: number): boolean {
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
export async function killTree(root: number, graceMs = 3000): Promise<void> {
  const pids = [root, ...descendantsOf(root)]
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
