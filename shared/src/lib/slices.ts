/**
 * Work in slices, at most one slice per turn of the event loop.
 *
 * Long jobs on the embedded adapters (a 10,000-record batch upserted 500 documents per
 * transaction, a retention sweep deleting 500 rows per transaction) hand the event loop back
 * between slices. With `setImmediate` alone, every job waiting for its next slice resumes in the
 * same check phase: four batches in flight meant four slices (4 x ~75 ms here) back to back before
 * the loop polled sockets again, and `/healthz` waited 0.3–2 s under load. `nextSlice()` lets one
 * waiting job resume per turn, in arrival order: between two slices the loop always polls for
 * I/O, so a request waits at most one slice, whatever the number of jobs. Throughput is the
 * same (the work is the same; an idle turn costs microseconds). The JSON body parser takes a
 * slice for a large body too (http/json-body.ts): bodies that complete together are parsed one
 * per turn.
 */
const waiting: Array<() => void> = []
let scheduled = false

function releaseOne(): void {
  const next = waiting.shift()
  // queued from inside this callback: runs in the next turn, after the poll phase
  if (waiting.length > 0) setImmediate(releaseOne)
  else scheduled = false
  next?.()
}

/** Resolves when this job may run its next slice: after the event loop has polled for I/O. */
export function nextSlice(): Promise<void> {
  return new Promise<void>((resolve) => {
    waiting.push(resolve)
    if (!scheduled) {
      scheduled = true
      setImmediate(releaseOne)
    }
  })
}
