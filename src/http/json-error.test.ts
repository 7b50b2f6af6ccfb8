import { describe, expect, it } from "vitest";
import { jsonErrorPlace } from "./json-error.js";

describe("jsonErrorPlace", () => {
  it("is null for JSON", () => {
    for (const text of ['{"a":[1,2.5e3,-0,true,false,null,"x\\u00e9\\n"]}', " [ ] ", '"s"', "0"]) expect(jsonErrorPlace(text)).toBeNull();
  });

  it("names the first place a body stops being JSON, and what was expected there", () => {
    expect(jsonErrorPlace('{"model": "x",}')).toEqual({ position: 14, line: 1, column: 15, expected: "a property name in double quotes" });
    expect(jsonErrorPlace('{"a": tru }')).toMatchObject({ position: 6, expected: "a value" });
    expect(jsonErrorPlace("[1,2")).toMatchObject({ position: 4, expected: '"," or "]"' });
    expect(jsonErrorPlace('{"a":1}}')).toMatchObject({ position: 7, expected: "the end of the body" });
    expect(jsonErrorPlace('{\n  "a": 1\n  "b": 2\n}')).toMatchObject({ line: 3, column: 3, expected: '"," or "}"' });
    expect(jsonErrorPlace("")).toMatchObject({ position: 0, expected: "a value" });
    expect(jsonErrorPlace('"open')).toMatchObject({ expected: 'a closing "' });
  });
});
