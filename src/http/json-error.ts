// Where a JSON body stops being JSON, for the refusal's message: JSON.parse's own messages name a
// position for some mistakes and quote the text for others. Run only on a body JSON.parse refused.

export interface JsonErrorPlace {
  /** Offset in characters from the start of the body. */
  position: number;
  line: number;
  column: number;
  expected: string;
}

/** The first place `text` is not JSON, or null when it is JSON. */
export function jsonErrorPlace(text: string): JsonErrorPlace | null {
  let i = 0;
  const fail = (expected: string): never => {
    throw new SyntaxFailure(i, expected);
  };
  const space = () => {
    while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++;
  };
  const literal = (word: string) => {
    if (text.startsWith(word, i)) i += word.length;
    else fail("a value");
  };
  const string = () => {
    i++; // the opening quote
    while (i < text.length && text[i] !== '"') {
      const code = text.charCodeAt(i);
      if (code < 0x20) fail("an escaped control character");
      if (text[i] === "\\") {
        i++;
        if (text[i] === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail("four hex digits after \\u");
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? "")) fail("an escape sequence");
      }
      i++;
    }
    if (i >= text.length) fail('a closing "');
    i++;
  };
  const number = () => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!match || match[0] === "" || match[0] === "-") fail("a value");
    i += match![0].length;
  };
  const value = (depth: number): void => {
    space();
    const c = text[i];
    if (c === "{") {
      i++;
      space();
      if (text[i] === "}") return void i++;
      for (;;) {
        space();
        if (text[i] !== '"') fail("a property name in double quotes");
        string();
        space();
        if (text[i] !== ":") fail('":"');
        i++;
        value(depth + 1);
        space();
        if (text[i] === ",") i++;
        else if (text[i] === "}") return void i++;
        else fail('"," or "}"');
      }
    }
    if (c === "[") {
      i++;
      space();
      if (text[i] === "]") return void i++;
      for (;;) {
        value(depth + 1);
        space();
        if (text[i] === ",") i++;
        else if (text[i] === "]") return void i++;
        else fail('"," or "]"');
      }
    }
    if (c === '"') return string();
    if (c === "t") return literal("true");
    if (c === "f") return literal("false");
    if (c === "n") return literal("null");
    return number();
  };
  try {
    value(0);
    space();
    if (i < text.length) fail("the end of the body");
    return null;
  } catch (error) {
    if (!(error instanceof SyntaxFailure)) throw error;
    const before = text.slice(0, error.position);
    const line = before.split("\n").length;
    return { position: error.position, line, column: error.position - before.lastIndexOf("\n"), expected: error.expected };
  }
}

class SyntaxFailure extends Error {
  constructor(
    readonly position: number,
    readonly expected: string,
  ) {
    super(expected);
  }
}
