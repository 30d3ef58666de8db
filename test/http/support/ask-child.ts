import type { ChildProcess } from 'node:child_process'

/**
 * The parent's side of rss-meter-child.ts: sends `{ type }` to the measured child and resolves
 * with its first message of type `answer` (`mark` → `marked`, `report` → `report`).
 */
export function askChild<T>(child: ChildProcess, type: string, answer: string): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (m: { type: string }) => {
      if (m.type !== answer) return
      child.off('message', onMessage)
      resolve(m as T)
    }
    child.on('message', onMessage)
    child.send({ type })
  })
}
