import { describe, expect, it } from "vitest";
import { CsvError, parseCsv } from "./csv-parse.js";

const limits = { maxChars: 10_000, maxRecords: 100, maxFields: 10, maxFieldChars: 50 };
const fields = (text: string) => parseCsv(text, limits).map((r) => r.fields);

describe("parseCsv", () => {
  it("reads fields, CRLF and LF records, a BOM, blank lines and a missing final line break", () => {
    expect(fields("\ufeffmodel,price\r\na,1\n\nb,2")).toEqual([
      ["model", "price"],
      ["a", "1"],
      ["b", "2"],
    ]);
    expect(fields("a,,\n")).toEqual([["a", "", ""]]);
    expect(fields("")).toEqual([]);
  });

  it("reads quoted fields with commas, doubled quotes and line breaks, and counts lines", () => {
    const records = parseCsv('model,note\n"a,b","say ""hi"""\n"multi\nline",x\nlast,"" \n'.replace(" \n", "\n"), limits);
    expect(records.map((r) => r.fields)).toEqual([
      ["model", "note"],
      ["a,b", 'say "hi"'],
      ["multi\nline", "x"],
      ["last", ""],
    ]);
    expect(records.map((r) => r.line)).toEqual([1, 2, 3, 5]);
  });

  it("refuses malformed quoting with the line it starts on", () => {
    const error = (text: string) => {
      try {
        parseCsv(text, limits);
      } catch (e) {
        expect(e).toBeInstanceOf(CsvError);
        return (e as CsvError).message;
      }
      throw new Error("no error");
    };
    expect(error('a,b\n"open,1\n2')).toBe("line 2: a quoted field is not closed");
    expect(error('a\nb"c,1')).toMatch(/^line 2: a quote inside an unquoted field/);
    expect(error('a\n"b"c,1')).toMatch(/^line 2: text after a closing quote/);
  });

  it("bounds the text, the records, the fields and a field's length", () => {
    expect(() => parseCsv("x".repeat(10_001), limits)).toThrow("larger than 10000 characters");
    expect(() => parseCsv("a\n".repeat(101), limits)).toThrow("line 101: the file has more than 100 records");
    expect(() => parseCsv("1,2,3,4,5,6,7,8,9,10,11", limits)).toThrow("more than 10 fields");
    expect(() => parseCsv("y".repeat(51), limits)).toThrow("longer than 50 characters");
    expect(() => parseCsv(`"${"z".repeat(51)}"`, limits)).toThrow("longer than 50 characters");
    expect(fields("1,2,3,4,5,6,7,8,9,10")[0]).toHaveLength(10);
  });
});
