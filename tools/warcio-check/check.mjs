// check.mjs reads a WARC file with webrecorder's warcio.js, an implementation
// independent of pkg/warc, and prints a JSON summary that the Go test
// TestWarcioReadsOurFiles compares against what the writer says it wrote.
//
// Usage: node check.mjs FILE.warc[.gz]
//
// Output: {"records": N, "types": {"warcinfo": 1, ...}, "targets": [...],
//          "members": [{"type", "id", "offset", "length", "protocols",
//                       "cipherSuite", "status"}],
//          "payloadDigestMismatches": [...], "blockDigestMismatches": [...],
//          "warnings": [...]}
//
// Besides parsing, it recomputes the SHA-1 payload digest of every response
// record and the block digest of every record that has one, so a digest bug
// in the writer cannot hide behind our own reader. The file is read twice:
// with HTTP parsing for payloads, and without it for whole blocks.
import { createReadStream } from "node:fs";
import { createHash } from "node:crypto";
import { WARCParser } from "warcio";

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

function base32(bytes) {
  let bits = 0;
  let value = 0;
  let out = "";
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) {
    out += BASE32[(value << (5 - bits)) & 31];
  }
  while (out.length % 8 !== 0) {
    out += "=";
  }
  return out;
}

async function main() {
  const file = process.argv[2];
  if (!file) {
    console.error("usage: node check.mjs FILE.warc[.gz]");
    process.exit(2);
  }

  // warcio reports framing problems (e.g. a wrong Content-Length) through
  // console.warn and carries on; collect them so the caller can fail on them.
  const warnings = [];
  console.warn = (...args) => warnings.push(args.join(" "));

  const summary = {
    records: 0,
    types: {},
    targets: [],
    members: [],
    payloadDigestMismatches: [],
    blockDigestMismatches: [],
    warnings,
  };

  // keepHeadersCase stores fields in warcio's own Map instead of the fetch
  // API's Headers, which takes only Latin-1 and re-encodes UTF-8 values (WARC
  // 1.1 allows UTF-8, e.g. in IRI target URIs) into mojibake.
  const opts = { keepHeadersCase: true };
  const parser = new WARCParser(createReadStream(file), { ...opts, parseHttp: true });
  for await (const record of parser) {
    const type = record.warcType;
    // Without content decoding: the payload exactly as it sits in the record.
    const payload = await record.readFully(false);
    summary.records++;
    summary.types[type] = (summary.types[type] || 0) + 1;
    const target = record.warcTargetURI;
    if (target) {
      summary.targets.push(target);
    }
    summary.members.push({
      type,
      id: record.warcHeader("WARC-Record-ID"),
      offset: parser.offset,
      length: parser.recordLength,
      // WARC-Protocol is one of the fields warcio.js lets repeat; getMultiple
      // returns every value in order.
      protocols: record.warcHeaders.headers.getMultiple("WARC-Protocol") || [],
      cipherSuite: record.warcHeader("WARC-Cipher-Suite") || "",
      status: type === "response" ? Number(record.httpHeaders?.statusCode) || 0 : 0,
    });
    if (type === "response") {
      const want = record.warcPayloadDigest;
      const got = "sha1:" + base32(createHash("sha1").update(payload).digest());
      if (want !== got) {
        summary.payloadDigestMismatches.push({ target, want, got });
      }
    }
  }

  // Second pass without HTTP parsing: readFully returns the whole block.
  const blocks = new WARCParser(createReadStream(file), { ...opts, parseHttp: false });
  let blockRecords = 0;
  for await (const record of blocks) {
    blockRecords++;
    const block = await record.readFully(false);
    const want = record.warcBlockDigest;
    if (!want) {
      continue;
    }
    const got = "sha1:" + base32(createHash("sha1").update(block).digest());
    if (want !== got) {
      summary.blockDigestMismatches.push({ id: record.warcHeader("WARC-Record-ID"), want, got });
    }
  }
  if (blockRecords !== summary.records) {
    warnings.push(`read ${summary.records} records with HTTP parsing, ${blockRecords} without`);
  }
  process.stdout.write(JSON.stringify(summary) + "\n");
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
