import { afterEach, describe, expect, it, vi } from 'vitest'
import { open } from 'node:fs/promises'
import { readdirSync, readlinkSync, realpathSync, statSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import { join } from 'node:path'
import { openEmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { walSyncer } from '@lsv/shared/adapters/embedded/db-commits.ts'
import { createEmbeddedQueue } from '@lsv/shared/adapters/embedded/queue.ts'
import { systemClock } from '@lsv/shared/model/clock.ts'
import pino from 'pino'
import { tempDataDir } from '../helpers/embedded.ts'
import { waitFor } from '../conformance/suites/wait.ts'

const cleanups: Array<() => void> = []
afterEach(() => {
  vi.restoreAllMocks()
  while (cleanups.length > 0) cleanups.pop()!()
})

/** a fresh database in its own folder, closed and removed after the test */
function freshDb(table = 'CREATE TABLE t (v INTEGER)') {
  const { dir, cleanup } = tempDataDir()
  cleanups.push(cleanup)
  const edb = openEmbeddedDb(dir)
  cleanups.unshift(() => edb.close())
  if (table) edb.db.exec(table)
  return { dir, edb }
}

/** where a descriptor of /proc/self/fd points ('' for one closed while listing) */
function readlinkOr(path: string): string {
  try {
    return readlinkSync(path)
  } catch {
    return ''
  }
}

/** the prototype of node's FileHandle (not exported), to count datasync calls */
async function fileHandlePrototype(path: string): Promise<{ datasync(): Promise<void> }> {
  const h = await open(path, 'w')
  const proto = Object.getPrototypeOf(h) as { datasync(): Promise<void> }
  await h.close()
  return proto
}

describe('embedded db: syncWal (group commit)', () => {
  it('shares syncs between concurrent callers: 50 commits and calls at once cost at most two fdatasyncs', async () => {
    const { dir, edb } = freshDb()
    const proto = await fileHandlePrototype(join(dir, 'probe'))
    const datasync = vi.spyOn(proto, 'datasync')
    const insert = edb.db.prepare('INSERT INTO t (v) VALUES (?)')
    const calls = Array.from({ length: 50 }, (_, i) => {
      edb.transaction(() => insert.run(i))
      return edb.syncWal()
    })
    await Promise.all(calls)
    expect(datasync.mock.calls.length).toBeGreaterThanOrEqual(1)
    expect(datasync.mock.calls.length).toBeLessThanOrEqual(2)
    // a later call after the others settled starts a sync of its own
    await edb.syncWal()
    expect(datasync.mock.calls.length).toBeLessThanOrEqual(3)
    expect(datasync.mock.calls.length).toBeGreaterThanOrEqual(2)
  })

  it("a group commit's writers share the sync started after their commit (one fdatasync, not two)", async () => {
    const { dir, edb } = freshDb()
    const proto = await fileHandlePrototype(join(dir, 'probe'))
    const datasync = vi.spyOn(proto, 'datasync')
    const insert = edb.db.prepare('INSERT INTO t (v) VALUES (?)')
    // as the queue's publishers do: each write of one turn in the group's commit, then the sync
    // mutation: a sync under way taken as started before every caller's commit -> 2 fdatasyncs
    const writers = Array.from({ length: 20 }, async (_, i) => {
      await edb.groupCommit(() => insert.run(i))
      await edb.syncWal()
    })
    await Promise.all(writers)
    expect(datasync).toHaveBeenCalledTimes(1)
    expect(edb.db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 20 })
  })

  it('a commit made after the sync under way started waits for a sync of its own, started after that one', async () => {
    const { dir, edb } = freshDb()
    const proto = await fileHandlePrototype(join(dir, 'probe'))
    // each fdatasync ends when the test says so
    const started: Array<() => void> = []
    vi.spyOn(proto, 'datasync').mockImplementation(() => new Promise<void>((resolve) => started.push(resolve)))
    const insert = edb.db.prepare('INSERT INTO t (v) VALUES (?)')
    edb.transaction(() => insert.run(1))
    const first = edb.syncWal()
    await vi.waitFor(() => expect(started).toHaveLength(1))
    edb.transaction(() => insert.run(2))
    let secondDone = false
    const second = edb.syncWal().then(() => {
      secondDone = true
    })
    // no commit since the second call: the same wait as the second's
    const third = edb.syncWal()
    started[0]!()
    await first
    await new Promise((resolve) => setImmediate(resolve))
    // mutation: a caller whose commit came after the running sync started shares it -> done here
    expect(secondDone).toBe(false)
    await vi.waitFor(() => expect(started).toHaveLength(2))
    started[1]!()
    await Promise.all([second, third])
    expect(started).toHaveLength(2)
  })

  it('release waits for the sync under way before it closes the WAL handle', async () => {
    const { dir } = freshDb()
    const file = join(dir, 'wal-like')
    await (await open(file, 'w')).close()
    const proto = await fileHandlePrototype(join(dir, 'probe'))
    const started: Array<() => void> = []
    vi.spyOn(proto, 'datasync').mockImplementation(() => new Promise<void>((resolve) => started.push(resolve)))
    const syncer = walSyncer(
      file,
      () => false,
      () => 0,
    )
    const synced = syncer.sync()
    await vi.waitFor(() => expect(started).toHaveLength(1))
    let released = false
    const release = syncer.release().then(() => {
      released = true
    })
    await new Promise((resolve) => setTimeout(resolve, 30))
    // mutation: release not waiting for the running sync -> the handle closed under it
    expect(released).toBe(false)
    started[0]!()
    await synced
    await release
    expect(released).toBe(true)
  })

  it('a failed sync rejects its callers and the next call syncs again', async () => {
    const { dir, edb } = freshDb()
    const proto = await fileHandlePrototype(join(dir, 'probe'))
    const datasync = vi.spyOn(proto, 'datasync').mockRejectedValueOnce(Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }))
    // descriptors of this process open on the WAL: SQLite's own, plus the syncer's handle
    const wal = join(realpathSync(dir), 'platform.db-wal')
    const onWal = () => readdirSync('/proc/self/fd').filter((fd) => readlinkOr(`/proc/self/fd/${fd}`) === wal).length
    const sqliteOwn = onWal()
    await expect(edb.syncWal()).rejects.toThrow('EIO')
    // the failed sync's handle is closed, not left for a garbage collection to close (with
    // node's warning; the old syncer kept it open: one descriptor more per failed sync)
    await vi.waitFor(() => expect(onWal()).toBe(sqliteOwn))
    await expect(edb.syncWal()).resolves.toBeUndefined()
    expect(datasync).toHaveBeenCalledTimes(2)
    expect(onWal()).toBe(sqliteOwn + 1)
  })

  it('rejects after close', async () => {
    const { dir, cleanup } = tempDataDir()
    cleanups.push(cleanup)
    const edb = openEmbeddedDb(dir)
    edb.close()
    await expect(edb.syncWal()).rejects.toThrow('database closed')
  })

  it('a publish is not acknowledged when its WAL sync fails (the edge then answers 503)', async () => {
    const { dir, edb } = freshDb('')
    const queue = createEmbeddedQueue(edb, { clock: systemClock, logger: pino({ level: 'silent' }) })
    await queue.publish('contact-batches', Buffer.from('warm-up'))
    const proto = await fileHandlePrototype(join(dir, 'probe'))
    vi.spyOn(proto, 'datasync').mockRejectedValueOnce(new Error('EIO: i/o error'))
    await expect(queue.publish('contact-batches', Buffer.from('x'))).rejects.toThrow('EIO')
    await expect(queue.publish('contact-batches', Buffer.from('y'))).resolves.toMatch(/[0-9a-f-]{36}/)
    await queue.close()
  })
})

describe('embedded db: groupCommit', () => {
  it('writes queued in one turn share one commit; a failing write rejects alone', async () => {
    const { dir, edb } = freshDb('CREATE TABLE t (id INTEGER PRIMARY KEY)')
    edb.db.prepare('INSERT INTO t (id) VALUES (0)').run()
    // data_version on a second connection moves once per commit made by others
    const observer = new DatabaseSync(join(dir, 'platform.db'))
    cleanups.unshift(() => observer.close())
    const version = () => (observer.prepare('PRAGMA data_version').get() as { data_version: number }).data_version
    const before = version()
    const insert = edb.db.prepare('INSERT INTO t (id) VALUES (?)')
    const results = await Promise.allSettled(
      [1, 2, 0, 3].map((id) =>
        edb.groupCommit(() => {
          insert.run(id)
        }),
      ),
    )
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled'])
    expect(version() - before).toBe(1)
    const ids = (observer.prepare('SELECT id FROM t ORDER BY id').all() as Array<{ id: number }>).map((r) => r.id)
    expect(ids).toEqual([0, 1, 2, 3])
  })

  it('commits writes still queued when the database closes, and refuses new ones', async () => {
    const { dir, cleanup } = tempDataDir()
    cleanups.push(cleanup)
    const edb = openEmbeddedDb(dir)
    edb.db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY)')
    const pending = edb.groupCommit(() => {
      edb.db.prepare('INSERT INTO t (id) VALUES (7)').run()
    })
    edb.close()
    await expect(pending).resolves.toBeUndefined()
    await expect(edb.groupCommit(() => {})).rejects.toThrow('database closed')
    const reopened = new DatabaseSync(join(dir, 'platform.db'))
    expect(reopened.prepare('SELECT count(*) AS n FROM t').get()).toEqual(expect.objectContaining({ n: 1 }))
    reopened.close()
  })
})

describe('embedded db: housekeeping off the event loop', () => {
  /** a database of one blob table, its maintenance watching every 20 ms; the WAL file's size */
  function blobTable(options: { checkpointBytes?: number } = {}) {
    const { dir, cleanup } = tempDataDir()
    cleanups.push(cleanup)
    const edb = openEmbeddedDb(dir, 'platform.db', { maintenanceIntervalMs: 20, ...options })
    cleanups.unshift(() => edb.close())
    edb.db.exec('CREATE TABLE t (v BLOB)')
    const insert = edb.db.prepare('INSERT INTO t (v) VALUES (?)')
    return { edb, insert, walBytes: () => statSync(join(dir, 'platform.db-wal')).size }
  }

  it('checkpoints the WAL on the maintenance thread: the serving connection has automatic checkpoints off, and the WAL stays bounded', async () => {
    const { edb, insert, walBytes } = blobTable()
    expect(edb.db.prepare('PRAGMA wal_autocheckpoint').get()).toEqual({ wal_autocheckpoint: 0 })
    const delete_ = edb.db.prepare('DELETE FROM t')
    // 64 MiB written in 1 MiB commits; the event loop turns between them, as under real traffic
    for (let i = 0; i < 64; i++) {
      insert.run(Buffer.alloc(1024 * 1024, i))
      if (i % 8 === 7) delete_.run()
      await new Promise((r) => setTimeout(r, 10))
    }
    // without anyone calling for it, the thread checkpoints and, once the writes pause, the WAL
    // shrinks back (automatic checkpoints being off, without the thread it would hold all 64 MiB
    // for good)
    await waitFor(() => walBytes() < 8 * 1024 * 1024, 'the WAL checkpointed and truncated', 30_000)
  })

  it('never shrinks the WAL under a stream of writes (TRUNCATE holds the write lock), only once the writers pause', async () => {
    const { insert, walBytes } = blobTable({ checkpointBytes: 1024 * 1024 })
    // one large commit grows the WAL past the threshold; then small commits a few ms apart, as a
    // stream of deliveries writes them, for 60 of the watch's intervals
    insert.run(Buffer.alloc(3 * 1024 * 1024, 1))
    const sizes: number[] = []
    const until = Date.now() + 1200
    while (Date.now() < until) {
      insert.run(Buffer.alloc(64, 2))
      sizes.push(walBytes())
      await new Promise((r) => setTimeout(r, 2))
    }
    // meanwhile the thread checkpointed (PASSIVE) and the commits started the WAL over from its
    // beginning: the file keeps its size instead of being truncated under the writer
    expect(Math.min(...sizes), 'the WAL file was truncated while commits kept coming').toBeGreaterThan(1024 * 1024)
    // the pause: the next look finds the WAL unwritten, and the thread shrinks it
    await waitFor(() => walBytes() < 64 * 1024, 'the WAL truncated once the writes paused', 10_000)
  })

  it('a stream of writes does not outrun the checkpoints: the WAL starts over from its beginning instead of growing to its hard bound', async () => {
    const checkpointBytes = 512 * 1024
    const { edb, insert, walBytes } = blobTable({ checkpointBytes })
    // 32 KiB every 2 ms or so for 1.5 s (about 15 MiB), half of it in grouped commits (the gate's
    // writers) and half in autocommit statements (writers outside the gate), never pausing for a
    // whole interval of the watch
    let largest = 0
    const until = Date.now() + 1500
    for (let i = 0; Date.now() < until; i++) {
      const blob = Buffer.alloc(32 * 1024, i)
      if (i % 2 === 0) await edb.groupCommit(() => insert.run(blob))
      else insert.run(blob)
      largest = Math.max(largest, walBytes())
      await new Promise((r) => setTimeout(r, 2))
    }
    // each look of the watch (every 20 ms) copies the WAL and lets the next commit start it over.
    // Before, the copy stayed a few commits behind, the WAL never started over, and it grew until
    // the hard bound (16 checkpoint sizes, 8 MiB here) had it truncated under the writers
    expect(largest, `the WAL file reached ${(largest / 1048576).toFixed(1)} MiB`).toBeLessThan(16 * checkpointBytes)
  })

  it('shrinks a WAL past its hard bound (16 checkpoint sizes) even while the writes go on', async () => {
    const { insert, walBytes } = blobTable({ checkpointBytes: 256 * 1024 })
    insert.run(Buffer.alloc(6 * 1024 * 1024, 1)) // past the bound of 4 MiB
    let shrunk = false
    const until = Date.now() + 10_000
    while (!shrunk && Date.now() < until) {
      insert.run(Buffer.alloc(64, 2))
      shrunk = walBytes() < 1024 * 1024
      await new Promise((r) => setTimeout(r, 2))
    }
    expect(shrunk, 'the WAL was still past its bound after 10 s of writes').toBe(true)
  })
})
