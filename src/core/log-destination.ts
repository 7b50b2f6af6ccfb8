// Where the request log goes: lines gathered in memory and written to a file descriptor in blocks.
//
// Why not pino.destination (sonic-boom) with minLength: it measures its whole pending block with
// Buffer.byteLength on every line, which flattens the growing string each time (half of the
// request log's allocations, and ~2.7 µs of ~5.5 µs per line in a micro-benchmark). Here a line is
// only pushed to an array; the block is joined and encoded once, when it is written.
//
// - A block leaves when it reaches blockBytes (counted in UTF-16 code units, a cheap stand-in for
//   bytes that only decides when to write) or when the flush timer finds lines waiting, so a quiet
//   gateway's lines still appear within flushIntervalMs.
// - Writes are asynchronous (libuv's thread pool), one at a time and in order; a partial write goes
//   on from where it stopped. EAGAIN/EBUSY (a non-blocking pipe that is full) is retried shortly.
// - A stdout that never drains cannot grow memory without bound: past maxPendingBytes new lines are
//   dropped and counted, and the next block starts with a warning line that says how many. A block
//   that fails to write (ENOSPC, EIO) is counted the same way; after EPIPE nobody reads any more and
//   every later line is discarded.
// - At process exit, whatever waits is written synchronously (process 'exit' hook). A block whose
//   asynchronous write is still in flight at that moment is not written again, and may land after
//   the lines written at exit or not at all (as with sonic-boom).
import { write as writeAsync, writeSync } from "node:fs";

export interface BlockLogDestinationOptions {
  /** Write once this much waits; default 4096. */
  blockBytes?: number;
  /** Lines waiting this long are written even if the block is not full; default 250 ms. */
  flushIntervalMs?: number;
  /** Lines beyond this much waiting are dropped (and counted); default 16 MiB. */
  maxPendingBytes?: number;
  /** How long to wait before writing again after EAGAIN/EBUSY; default 10 ms. */
  retryDelayMs?: number;
  /**
   * Several processes share the file descriptor (cluster workers): each write ends at a line and
   * is at most PIPE_BUF bytes (a longer line goes alone), which a pipe writes whole or not at all.
   */
  atomicLineWrites?: boolean;
}

/** POSIX's minimum, and Linux's value: a pipe never interleaves a write this small with another. */
const PIPE_BUF = 4096;

const RETRYABLE = new Set(["EAGAIN", "EBUSY"]);
const live = new Set<BlockLogDestination>();
let exitHookInstalled = false;

function flushAllAtExit(): void {
  for (const destination of live) destination.flushSync();
}

export class BlockLogDestination {
  readonly #fd: number;
  readonly #blockBytes: number;
  readonly #maxPendingBytes: number;
  readonly #retryDelayMs: number;
  readonly #atomicLineWrites: boolean;
  readonly #timer: NodeJS.Timeout;
  #pending: string[] = [];
  #pendingBytes = 0;
  #writing = false;
  #dropped = 0;
  #discarding = false;
  #closed = false;
  #flushWaiters: Array<(error?: Error) => void> = [];

  constructor(fd: number, options: BlockLogDestinationOptions = {}) {
    this.#fd = fd;
    this.#blockBytes = options.blockBytes ?? 4096;
    this.#maxPendingBytes = options.maxPendingBytes ?? 16 * 1024 * 1024;
    this.#retryDelayMs = options.retryDelayMs ?? 10;
    this.#atomicLineWrites = options.atomicLineWrites ?? false;
    this.#timer = setInterval(() => {
      if (this.#pendingBytes > 0 || this.#dropped > 0) this.#startWrite();
    }, options.flushIntervalMs ?? 250);
    this.#timer.unref();
    live.add(this);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.on("exit", flushAllAtExit);
    }
  }

  /** pino calls this with one serialised line (ending in "\n"). */
  write(line: string): boolean {
    if (this.#closed || this.#discarding) return false;
    if (this.#pendingBytes + line.length > this.#maxPendingBytes) {
      this.#dropped++;
      return false;
    }
    this.#pending.push(line);
    this.#pendingBytes += line.length;
    if (this.#pendingBytes >= this.#blockBytes) this.#startWrite();
    return true;
  }

  /** Writes whatever waits; `done` runs once nothing is waiting or in flight (pino's logger.flush). */
  flush(done?: (error?: Error) => void): void {
    if (done) this.#flushWaiters.push(done);
    this.#startWrite();
  }

  /** Writes whatever waits before returning (at exit); a block already in flight is left to its write. */
  flushSync(): void {
    const block = this.#takeBlock()?.bytes;
    if (block === undefined) return;
    let offset = 0;
    let retries = 0;
    while (offset < block.length) {
      try {
        offset += writeSync(this.#fd, block, offset, this.#atomicLineWrites ? lineAlignedLength(block, offset) : block.length - offset);
      } catch (error) {
        // A full non-blocking pipe: wait for the reader a little, but never hang the exit.
        if (!RETRYABLE.has((error as NodeJS.ErrnoException).code ?? "") || ++retries > 1000) return;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
      }
    }
  }

  /** Stops the timer and writes what waits; later lines are ignored. */
  close(): void {
    if (this.#closed) return;
    clearInterval(this.#timer);
    this.flushSync();
    this.#closed = true;
    live.delete(this);
    this.#settleWaiters();
  }

  /** Lines dropped since the last block was handed to the file (for tests and diagnostics). */
  get droppedLines(): number {
    return this.#dropped;
  }

  /** The waiting lines as one buffer, led by a warning when some were dropped; null when none. */
  #takeBlock(): { bytes: Buffer; lines: number } | null {
    if (this.#discarding || this.#closed) return null;
    if (this.#pendingBytes === 0 && this.#dropped === 0) return null;
    let text = this.#pending.join("");
    // Lines lost if this block cannot be written: its own and those its warning reports.
    const lines = this.#pending.length + this.#dropped;
    if (this.#dropped > 0) {
      const warning = { level: 40, time: new Date().toISOString(), msg: "log lines dropped: the log output did not keep up or failed", dropped: this.#dropped };
      text = `${JSON.stringify(warning)}\n${text}`;
      this.#dropped = 0;
    }
    this.#pending = [];
    this.#pendingBytes = 0;
    return { bytes: Buffer.from(text, "utf8"), lines };
  }

  #startWrite(): void {
    if (this.#writing) return; // the write in flight looks for more when it completes
    const block = this.#takeBlock();
    if (block === null) return this.#settleWaiters();
    this.#writing = true;
    this.#writeFrom(block.bytes, 0, block.lines);
  }

  #writeFrom(block: Buffer, offset: number, lines: number): void {
    const length = this.#atomicLineWrites ? lineAlignedLength(block, offset) : block.length - offset;
    writeAsync(this.#fd, block, offset, length, null, (error, written) => {
      if (error) {
        if (RETRYABLE.has(error.code ?? "")) {
          setTimeout(() => this.#writeFrom(block, offset, lines), this.#retryDelayMs).unref();
          return;
        }
        this.#writing = false;
        if (error.code === "EPIPE") {
          // The reader is gone for good: stop logging instead of queueing lines forever.
          this.#discarding = true;
          this.#pending = [];
          this.#pendingBytes = 0;
        } else this.#dropped += lines;
        // No new attempt right away (a full disk would make this a busy loop): the timer tries again.
        return this.#settleWaiters(error);
      }
      if (offset + written < block.length) return this.#writeFrom(block, offset + written, lines);
      this.#writing = false;
      if (this.#pendingBytes >= this.#blockBytes || this.#flushWaiters.length > 0) this.#startWrite();
    });
  }

  #settleWaiters(error?: Error): void {
    if (this.#writing || this.#flushWaiters.length === 0) return;
    const waiters = this.#flushWaiters;
    this.#flushWaiters = [];
    for (const done of waiters) done(error);
  }
}

/** The longest run of whole lines from offset within PIPE_BUF bytes (one whole line when it is longer). */
export function lineAlignedLength(block: Buffer, offset: number): number {
  const remaining = block.length - offset;
  if (remaining <= PIPE_BUF) return remaining;
  const lastNewline = block.lastIndexOf(0x0a, offset + PIPE_BUF - 1);
  if (lastNewline >= offset) return lastNewline + 1 - offset;
  const nextNewline = block.indexOf(0x0a, offset);
  return nextNewline === -1 ? remaining : nextNewline + 1 - offset;
}
