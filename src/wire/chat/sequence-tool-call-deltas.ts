// Turns Chat `delta.tool_calls` fragments into ordered start / arguments / end operations, so the
// Anthropic and Responses stream translators (whose tool blocks cannot interleave) share one rule:
// calls stream live one at a time; a call that appears while another is still incomplete is buffered,
// never dropped, and replayed in order when the open one closes.
import { randomIdSuffix } from "../shared/ids.js";
import type { ChatToolCallDelta } from "./types.js";

export type ToolCallOperation =
  | { kind: "start"; key: number; id: string; name: string }
  | { kind: "arguments"; key: number; fragment: string }
  | { kind: "end"; key: number; id: string; name: string; arguments: string };

interface ToolCallSlot {
  key: number;
  id: string | undefined;
  name: string;
  /** Every fragment received, for the full arguments at the end. */
  arguments: string;
  /** Fragments received but not yet emitted (before the slot started). */
  pending: string;
  state: "waiting" | "open" | "closed";
}

export class ToolCallSequencer {
  private readonly slots: ToolCallSlot[] = [];
  /** Chat `index` -> slot key; an index reused with a different id gets a fresh slot. */
  private readonly byIndex = new Map<number, ToolCallSlot>();
  private open: ToolCallSlot | undefined;
  /** Fragments that arrived for a call already closed (upstream went back to it): kept for the record. */
  readonly lateFragments: string[] = [];

  /** True while a tool call block is open. */
  get isOpen(): boolean {
    return this.open !== undefined;
  }

  /** Full calls seen so far, in order of first appearance. */
  calls(): Array<{ id: string; name: string; arguments: string }> {
    return this.slots.map((slot) => ({ id: this.idOf(slot), name: slot.name, arguments: slot.arguments }));
  }

  push(deltas: readonly ChatToolCallDelta[]): ToolCallOperation[] {
    const ops: ToolCallOperation[] = [];
    deltas.forEach((delta, position) => {
      const slot = this.slotFor(delta, position);
      // First non-empty name wins: some upstreams repeat the name on every fragment.
      if (slot.name === "" && delta.function?.name !== undefined) slot.name = delta.function.name;
      const fragment = delta.function?.arguments ?? "";
      if (fragment !== "") {
        if (slot.state === "closed") {
          this.lateFragments.push(fragment);
        } else {
          slot.arguments += fragment;
          if (slot.state === "open") ops.push({ kind: "arguments", key: slot.key, fragment });
          else slot.pending += fragment;
        }
      }
      // A new call while another is open: if the open call's arguments already form complete JSON it
      // cannot continue validly, so close it and stream the new one live instead of buffering it.
      if (this.open !== undefined && slot !== this.open && isCompleteJson(this.open.arguments)) ops.push(...this.closeOpen());
      if (this.open === undefined) ops.push(...this.startNext(false));
    });
    return ops;
  }

  /** Closes the open call (e.g. text resumes after a call); buffered calls wait for the next push or flush. */
  closeOpen(): ToolCallOperation[] {
    const slot = this.open;
    if (slot === undefined) return [];
    slot.state = "closed";
    this.open = undefined;
    return [{ kind: "end", key: slot.key, id: this.idOf(slot), name: slot.name, arguments: slot.arguments }];
  }

  /** End of the choice: close the open call, then replay every buffered call in order. */
  flush(): ToolCallOperation[] {
    const ops = this.closeOpen();
    for (;;) {
      const started = this.startNext(true);
      if (started.length === 0) return ops;
      ops.push(...started, ...this.closeOpen());
    }
  }

  private slotFor(delta: ChatToolCallDelta, position: number): ToolCallSlot {
    const index = typeof delta.index === "number" ? delta.index : position;
    const existing = this.byIndex.get(index);
    const reusedIndex = existing !== undefined && delta.id !== undefined && existing.id !== undefined && delta.id !== existing.id;
    if (existing !== undefined && !reusedIndex) {
      if (existing.id === undefined && delta.id !== undefined) existing.id = delta.id;
      return existing;
    }
    const slot: ToolCallSlot = { key: this.slots.length, id: delta.id, name: "", arguments: "", pending: "", state: "waiting" };
    this.slots.push(slot);
    this.byIndex.set(index, slot);
    return slot;
  }

  /** Opens the first waiting slot whose name is known (or any waiting slot when `force`, at end of stream). */
  private startNext(force: boolean): ToolCallOperation[] {
    const slot = this.slots.find((s) => s.state === "waiting");
    if (slot === undefined || (slot.name === "" && !force)) return [];
    slot.state = "open";
    this.open = slot;
    const ops: ToolCallOperation[] = [{ kind: "start", key: slot.key, id: this.idOf(slot), name: slot.name }];
    if (slot.pending !== "") ops.push({ kind: "arguments", key: slot.key, fragment: slot.pending });
    slot.pending = "";
    return ops;
  }

  private idOf(slot: ToolCallSlot): string {
    if (slot.id === undefined) slot.id = `call_${randomIdSuffix().slice(0, 24)}`;
    return slot.id;
  }
}

function isCompleteJson(text: string): boolean {
  if (text.trim() === "") return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
