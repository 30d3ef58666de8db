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

/** wakes the subscribers of `topic` on the file at `path`, on every thread of this process */
export function wake(path: string, topic: string): void {
  const key = wakeKey(path, topic)
  wakeups.emit(key)
  otherThreads.postMessage(key)
}

/** calls `listener` on each wake-up of `topic` on the file at `path`; returns the function that stops it */
export function onWake(path: string, topic: string, listener: () => void): () => void {
  const key = wakeKey(path, topic)
  wakeups.on(key, listener)
  return () => wakeups.off(key, listener)
}
