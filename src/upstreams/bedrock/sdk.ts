// The AWS SDK parts a bedrock provider needs (the SigV4 signer and its SHA-256, the event stream
// codec), loaded on first use instead of with the registry: a gateway without a bedrock provider
// never loads them, and the others start without them (@smithy/* and @aws-crypto/*: 26 modules,
// ~65 ms of CPU on a busy 2-core VM; docs/decisions/0031-load-what-a-command-needs.md). Loaded
// synchronously (all four are CommonJS, which is what `import` loaded too), so that a stream decoder
// can be made where the descriptor's contract asks for one; the signer is the first use on every
// request, the decoder's codec the second.
import { createRequire } from "node:module";
import type * as Sha256Js from "@aws-crypto/sha256-js";
import type * as EventStreamCodecJs from "@smithy/eventstream-codec";
import type * as SignatureV4Js from "@smithy/signature-v4";
import type * as Utf8Js from "@smithy/util-utf8";

const require = createRequire(import.meta.url);

interface SignerSdk {
  SignatureV4: typeof SignatureV4Js.SignatureV4;
  Sha256: typeof Sha256Js.Sha256;
}

interface CodecSdk {
  EventStreamCodec: typeof EventStreamCodecJs.EventStreamCodec;
  fromUtf8: typeof Utf8Js.fromUtf8;
  toUtf8: typeof Utf8Js.toUtf8;
}

let signer: SignerSdk | undefined;
let codec: CodecSdk | undefined;

export function signerSdk(): SignerSdk {
  signer ??= {
    SignatureV4: (require("@smithy/signature-v4") as typeof SignatureV4Js).SignatureV4,
    Sha256: (require("@aws-crypto/sha256-js") as typeof Sha256Js).Sha256,
  };
  return signer;
}

export function codecSdk(): CodecSdk {
  if (!codec) {
    const { fromUtf8, toUtf8 } = require("@smithy/util-utf8") as typeof Utf8Js;
    codec = { EventStreamCodec: (require("@smithy/eventstream-codec") as typeof EventStreamCodecJs).EventStreamCodec, fromUtf8, toUtf8 };
  }
  return codec;
}
