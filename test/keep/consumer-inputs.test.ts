// Consumer inputs (the core future `keep fetch` and `keep exec` share): all of --url, --ca and
// --token-file required, https only, no --token flag, one trailing newline stripped from the token
// file, paths validated and deduplicated, everything before any connection.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { InputError, loadConsumerInputs, parseConsumerFlags, readTokenFile } from "../../keep/consumer/inputs.js";
import { makeTempDir } from "../helpers/temp-dir.js";

const test = suite("keep consumer inputs");
const tmp = makeTempDir("keep-inputs");
const f = (n: string): string => join(tmp.path, n);
writeFileSync(f("ca.pem"), "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
writeFileSync(f("token"), "tok-123\n");
writeFileSync(f("empty"), "");
writeFileSync(f("nl-only"), "\n");
writeFileSync(f("two-nl"), "tok\n\n");
const good = ["--url", "https://keep.internal:8443", "--ca", f("ca.pem"), "--token-file", f("token"), "--path", "app/A", "--path", "app/", "--path", "app/A"];

const load = (args: string[]) => loadConsumerInputs(parseConsumerFlags(args).values);
const refused = (args: string[], pattern: RegExp): void => {
  try {
    load(args);
  } catch (error) {
    assert.instance(error, InputError);
    assert.match((error as Error).message, pattern);
    assert.not.ok((error as Error).message.includes("tok-123"));
    return;
  }
  assert.unreachable(`accepted ${args.join(" ")}`);
};

test("valid inputs: the token without its newline, paths deduplicated in order", () => {
  const inputs = load(good);
  assert.is(inputs.token, "tok-123");
  assert.equal(inputs.paths, ["app/A", "app/"]);
  assert.is(inputs.url.host, "keep.internal:8443");
  const rest = parseConsumerFlags([...good, "--", "cmd", "--token", "x"]).rest;
  assert.equal(rest, ["cmd", "--token", "x"]);
});

test("--token is an unknown flag, like any other unknown flag", () => {
  refused([...good, "--token", "tok-123"], /unknown flag "--token"/);
  refused([...good, "--token=tok-123"], /unknown flag "--token"/);
  refused([...good, "--insecure"], /unknown flag "--insecure"/);
});

test("an http:// URL, a missing input or an invalid path fails", () => {
  refused(good.map((a) => (a === "https://keep.internal:8443" ? "http://keep.internal:8443" : a)), /https/);
  for (const flag of ["--url", "--ca", "--token-file"]) {
    const i = good.indexOf(flag);
    refused([...good.slice(0, i), ...good.slice(i + 2)], new RegExp(`${flag} is required`));
  }
  refused(good.slice(0, 6), /--path is required/);
  for (const bad of ["/app", "app//x", "a/../b", "/", "sp ace"]) refused([...good, "--path", bad], /invalid --path/);
});

test("the token file: one trailing newline stripped; empty, newline-only, missing or multi-line fail", () => {
  assert.is(readTokenFile(f("token")), "tok-123");
  for (const name of ["empty", "nl-only", "missing", "two-nl"]) assert.throws(() => readTokenFile(f(name)), (e: unknown) => e instanceof InputError, name);
  refused(good.map((a) => (a === f("ca.pem") ? f("token") : a)), /holds no PEM certificate/);
});

test.after(() => tmp.cleanup());
test.run();
