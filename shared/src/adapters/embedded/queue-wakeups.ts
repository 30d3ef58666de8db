import { EventEmitter } from 'node:events'
import { BroadcastChannel } from 'node:worker_threads'

/**
 * In-process wake-ups: a publish on one adapter wakes subscribers of the same file and topic in
 * this process at once, on this thread (the emitter) and on its other threads (the channel: the
 * local stack's consumer thread, platform/background-thread.ts); other processes find the message
 * on their next poll.
 */
const wakeups = new EventEmitter().setMaxListeners(0)
const wakeKey = (path: string, topic: string) => `${path}\u0000${topic}`
const otherThreads = new BroadcastChannel('lsv-embedded-queue-wakeups')
otherThreads.unref()
otherThreads.onmessage = (event) => {
  wakeups.emit(String((event as { data: unknown }).data))
}

/**
 * Keys woken by the code running now, told to the other threads once, after it (a microtask: the
 * publishes a group commit settles all run before it): a push's publish wakes its topic, a group
 * commit holds a dozen of them, and a message to the other threads per publish cost more than
 * the wake-up it carries.
 */
const toOtherThreads = new Set<string>()
function tellOtherThreads(): void {
  for (const key of toOtherThreads) otherThreads.postMessage(key)
  toOtherThreads.clear()
}

/** wakes the subscribers of `topic` on the file at `path`, on every thread of this process */
export function wake(path: string, topic: string): void {
  const key = wakeKey(path, topic)
  wakeups.emit(key)
  if (toOtherThreads.size === 0) queueMicrotask(tellOtherThreads)
  toOtherThreads.add(key)
}

/** calls `listener` on each wake-up of `topic` on the file at `path`; returns the function that stops it */
export function onWake(path: string, topic: string, listener: () => void): () => void {
  const key = wakeKey(path, topic)
  wakeups.on(key, listener)
  return () => wakeups.off(key, listener)
}
