import { suite } from "uvu";
import * as assert from "uvu/assert";
import { ApiError } from "../../runtime/errors.js";
import { parseDurationMs } from "../../compiler/index.js";
import { parseStrictJson, type BodySchema } from "../../runtime/http/json.js";

const dequeueSchema = {
  batch: { type: "integer" },
  lease_ttl: { type: "duration" },
  max_wait: { type: "duration" },
} as const satisfies BodySchema;

const publishSchema = {
  items: {
    type: "object[]",
    required: true,
    of: {
      id: { type: "string", required: true },
      payload_b64: { type: "string", required: true },
      headers: { type: "string_map" },
    },
  },
} as const satisfies BodySchema;

function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    assert.instance(error, ApiError);
    return error as ApiError;
  }
  throw new Error("expected an invalid_body refusal");
}

const strict = suite("strict JSON bodies");

strict("a valid body decodes with durations in milliseconds", () => {
  const body = parseStrictJson('{"batch": 5, "lease_ttl": "1m30s", "max_wait": "250ms"}', dequeueSchema);
  assert.equal(body, { batch: 5, lease_ttl: 90_000, max_wait: 250 });
});

strict("an empty body is {} only where allowed", () => {
  assert.equal(parseStrictJson(Buffer.from("  "), dequeueSchema, { allowEmpty: true }), {});
  const error = refusal(() => parseStrictJson("", dequeueSchema));
  assert.is(error.code, "invalid_body");
  assert.is(error.status, 400);
});

strict("malformed JSON, trailing documents and non-objects are invalid_body", () => {
  for (const text of ['{"batch":', '{"batch":1}{"batch":2}', '{"batch":1} x', "[1]", "null", '"text"']) {
    const error = refusal(() => parseStrictJson(text, dequeueSchema));
    assert.is(error.code, "invalid_body", text);
  }
});

strict("an unknown field is refused by name, including inherited and __proto__ names", () => {
  assert.match(refusal(() => parseStrictJson('{"batch":1,"bacth":2}', dequeueSchema)).detail, /"bacth"/);
  assert.match(refusal(() => parseStrictJson('{"toString":"x"}', dequeueSchema)).detail, /"toString"/);
  assert.match(refusal(() => parseStrictJson('{"__proto__":{"batch":1}}', dequeueSchema)).detail, /"__proto__"/);
});

strict("wrong types and bad durations name the field", () => {
  assert.match(refusal(() => parseStrictJson('{"batch":"5"}', dequeueSchema)).detail, /"batch" must be an integer/);
  assert.match(refusal(() => parseStrictJson('{"batch":1.5}', dequeueSchema)).detail, /"batch"/);
  assert.match(refusal(() => parseStrictJson('{"batch":null}', dequeueSchema)).detail, /"batch"/);
  assert.match(refusal(() => parseStrictJson('{"lease_ttl":"soon"}', dequeueSchema)).detail, /"lease_ttl"/);
  assert.match(refusal(() => parseStrictJson('{"lease_ttl":30}', dequeueSchema)).detail, /"lease_ttl"/);
});

strict("errors inside a batch carry item_index", () => {
  const missing = refusal(() => parseStrictJson('{"items":[{"id":"a","payload_b64":""},{"id":"b"}]}', publishSchema));
  assert.is(missing.itemIndex, 1);
  assert.match(missing.detail, /items\[1\]\.payload_b64/);
  assert.equal(missing.toBody(), { code: "invalid_body", detail: missing.detail, item_index: 1 });
  const extra = refusal(() => parseStrictJson('{"items":[{"id":"a","payload_b64":"","route":"/x"}]}', publishSchema));
  assert.is(extra.itemIndex, 0);
  const header = refusal(() => parseStrictJson('{"items":[{"id":"a","payload_b64":"","headers":{"X":1}}]}', publishSchema));
  assert.match(header.detail, /items\[0\]\.headers\.X/);
});

strict("a required field is required", () => {
  assert.match(refusal(() => parseStrictJson("{}", publishSchema)).detail, /missing required field "items"/);
});

strict("header maps keep a __proto__ name as data", () => {
  const body = parseStrictJson('{"items":[{"id":"a","payload_b64":"","headers":{"__proto__":"v"}}]}', publishSchema);
  assert.equal(Object.keys(body.items[0].headers ?? {}), ["__proto__"]);
  assert.is(Object.getPrototypeOf(body.items[0].headers), Object.prototype);
});

const durations = suite("request durations");

durations("parses units and compounds, refuses everything else", () => {
  assert.is(parseDurationMs("0"), 0);
  assert.is(parseDurationMs("250ms"), 250);
  assert.is(parseDurationMs("30s"), 30_000);
  assert.is(parseDurationMs("5m"), 300_000);
  assert.is(parseDurationMs("1h30m"), 5_400_000);
  assert.is(parseDurationMs("7d"), 604_800_000);
  for (const text of ["", "-1s", "5", "s", "1x", "1m ", " 1m", "1.5.5s"]) assert.is(parseDurationMs(text), undefined, text);
});

strict.run();
durations.run();
