import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BlockLogDestination, lineAlignedLength } from "./log-destination.js";

const line = (i: number) => `{"level":30,"n":${i},"msg":"request"}\n`;
const flushed = (destination: BlockLogDestination) => new Promise<void>((resolve) => destination.flush(() => resolve()));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("BlockLogDestination", () => {
  let dir: string;
  let file: string;
  let fd: number;
  const open: BlockLogDestination[] = [];
  const destination = (options: ConstructorParameters<typeof BlockLogDestination>[1]) => {
    const made = new BlockLogDestination(fd, options);
    open.push(made);
    return made;
  };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "gw-log-"));
    file = join(dir, "out.log");
    fd = openSync(file, "w");
  });
  afterEach(() => {
    for (const made of open.splice(0)) made.close();
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes every line, in order, once a block is full or on flush", async () => {
    const log = destination({ blockBytes: 200, flushIntervalMs: 60_000 });
    for (let i = 0; i < 1000; i++) log.write(line(i));
    await flushed(log);
    const expected = Array.from({ length: 1000 }, (_, i) => line(i)).join("");
    expect(readFileSync(file, "utf8")).toBe(expected);
  });

  it("keeps a short line in memory until the flush timer writes it", async () => {
    const log = destination({ blockBytes: 4096, flushIntervalMs: 50 });
    log.write(line(1));
    await sleep(10);
    expect(readFileSync(file, "utf8")).toBe(""); // not a write per line
    await sleep(150);
    expect(readFileSync(file, "utf8")).toBe(line(1));
  });

  it("drops lines beyond maxPendingBytes and says how many in a warning line before the next ones", async () => {
    const log = destination({ blockBytes: 1_000_000, flushIntervalMs: 60_000, maxPendingBytes: 3 * line(0).length });
    for (let i = 0; i < 5; i++) log.write(line(i));
    expect(log.droppedLines).toBe(2);
    await flushed(log);
    const [warning, ...rest] = readFileSync(file, "utf8").trimEnd().split("\n");
    expect(JSON.parse(warning!)).toMatchObject({ level: 40, dropped: 2 });
    expect(rest.map((text) => (JSON.parse(text) as { n: number }).n)).toEqual([0, 1, 2]);
    expect(log.droppedLines).toBe(0);
  });

  it("counts the lines of a block that could not be written as dropped, without throwing", async () => {
    const readOnly = openSync(file, "r");
    const log = new BlockLogDestination(readOnly, { blockBytes: 1 << 20, flushIntervalMs: 60_000 });
    try {
      log.write(line(1));
      log.write(line(2));
      const error = await new Promise<Error | undefined>((resolve) => log.flush(resolve));
      expect(error).toMatchObject({ code: "EBADF" });
      expect(log.droppedLines).toBe(2);
      // The next attempt (a flush, or the timer) reports them in its warning; that one fails too here.
      log.write(line(3));
      await new Promise((resolve) => log.flush(resolve));
      expect(log.droppedLines).toBe(3);
    } finally {
      log.close(); // before its descriptor is closed and its number can be reused
      closeSync(readOnly);
    }
  });

  it("waits out a full non-blocking pipe (EAGAIN) and partial writes, losing nothing", async () => {
    // The reader starts reading only after the pipe buffer (64 KiB here) has long been full.
    const reader = spawn(process.execPath, ["-e", "setTimeout(() => process.stdin.pipe(process.stdout), 300)"], { stdio: ["pipe", "pipe", "inherit"] });
    let received = "";
    reader.stdout.setEncoding("utf8").on("data", (text: string) => (received += text));
    const pipeFd = (reader.stdin as unknown as { _handle: { fd: number } })._handle.fd;
    const log = new BlockLogDestination(pipeFd, { blockBytes: 64 * 1024, flushIntervalMs: 60_000, retryDelayMs: 5 });
    const lines = Array.from({ length: 20_000 }, (_, i) => line(i)); // ~700 KiB
    for (const text of lines) log.write(text);
    await flushed(log);
    log.close(); // before the pipe's descriptor is closed and its number can be reused
    reader.stdin.end();
    await new Promise((resolve) => reader.on("close", resolve));
    expect(received).toBe(lines.join(""));
  });

  it("writes what is waiting when the process exits", async () => {
    const module = new URL("./log-destination.ts", import.meta.url).pathname;
    const script = `
      const { BlockLogDestination } = await import(${JSON.stringify(module)});
      const log = new BlockLogDestination(1, { blockBytes: 1 << 20, flushIntervalMs: 60_000 });
      log.write('{"n":1}\\n');
      log.write('{"n":2}\\n');
      process.exit(0);`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => (out += text));
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    expect(out).toBe('{"n":1}\n{"n":2}\n');
  });

  it("after close, writes what waited and ignores later lines", async () => {
    const log = destination({ blockBytes: 1 << 20, flushIntervalMs: 60_000 });
    log.write(line(1));
    log.close();
    expect(log.write(line(2))).toBe(false);
    await flushed(log); // a flush after close still answers
    expect(readFileSync(file, "utf8")).toBe(line(1));
  });

  it("with atomicLineWrites, writes everything in order as whole lines", async () => {
    const log = destination({ blockBytes: 20_000, flushIntervalMs: 60_000, atomicLineWrites: true });
    const lines = Array.from({ length: 500 }, (_, i) => (i === 7 ? `{"n":${i},"long":"${"x".repeat(9000)}"}\n` : line(i)));
    for (const text of lines) log.write(text);
    await flushed(log);
    expect(readFileSync(file, "utf8")).toBe(lines.join(""));
  });
});

describe("lineAlignedLength (atomicLineWrites)", () => {
  const PIPE_BUF = 4096;
  /** The writes a block is cut into. */
  const cut = (block: Buffer) => {
    const writes: Buffer[] = [];
    for (let offset = 0; offset < block.length;) {
      const length = lineAlignedLength(block, offset);
      writes.push(block.subarray(offset, offset + length));
      offset += length;
    }
    return writes;
  };

  it("cuts a block into writes of whole lines, each at most PIPE_BUF bytes", () => {
    const block = Buffer.from(Array.from({ length: 400 }, (_, i) => line(i)).join(""));
    const writes = cut(block);
    expect(writes.length).toBeGreaterThan(3);
    for (const write of writes) {
      expect(write.length).toBeLessThanOrEqual(PIPE_BUF);
      expect(write.at(-1)).toBe(0x0a);
    }
    expect(Buffer.concat(writes).equals(block)).toBe(true);
    // Greedy: each write is as long as whole lines allow.
    for (const write of writes.slice(0, -1)) expect(write.length + line(399).length).toBeGreaterThan(PIPE_BUF);
  });

  it("writes a line longer than PIPE_BUF alone, and a short remainder as it is", () => {
    const long = `{"x":"${"é".repeat(5000)}"}\n`;
    const block = Buffer.from(`${line(1)}${long}${line(2)}`);
    expect(cut(block).map((write) => write.toString())).toEqual([`${line(1)}`, long, line(2)]);
    expect(lineAlignedLength(Buffer.from("abc"), 0)).toBe(3);
  });
});
