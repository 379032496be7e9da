// Timestamps in Admin API queries (trends `since`/`until`, list bounds) are RFC 3339, calendar-checked.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { formatRfc3339, parseRfc3339Ms } from "../../runtime/admin/params.js";

const test = suite("RFC 3339 query timestamps");

test("years 0–99 are those years, not 1900–1999", () => {
  assert.is(formatRfc3339(parseRfc3339Ms("0000-01-01T00:00:00Z")!), "0000-01-01T00:00:00.000Z");
  assert.is(formatRfc3339(parseRfc3339Ms("0099-12-31T23:59:59Z")!), "0099-12-31T23:59:59.000Z");
  // Year 0 is a leap year in the proleptic Gregorian calendar; 1900 was not.
  assert.ok(parseRfc3339Ms("0000-02-29T00:00:00Z") !== undefined);
  assert.is(parseRfc3339Ms("0100-02-29T00:00:00Z"), undefined);
});

test("offsets, fractions and the calendar", () => {
  assert.is(parseRfc3339Ms("2026-11-23T10:00:00.250+01:30"), Date.parse("2026-11-23T08:30:00.250Z"));
  assert.is(parseRfc3339Ms("2026-02-29T00:00:00Z"), undefined);
  assert.is(parseRfc3339Ms("2026-13-01T00:00:00Z"), undefined);
  assert.is(parseRfc3339Ms("2026-11-23 10:00:00Z"), Date.parse("2026-11-23T10:00:00Z"));
});

test("digits below the millisecond round down, or up for an exclusive bound", () => {
  const base = Date.parse("2026-01-01T00:00:02Z");
  assert.is(parseRfc3339Ms("2026-01-01T00:00:02.0001Z"), base);
  assert.is(parseRfc3339Ms("2026-01-01T00:00:02.0001Z", "up"), base + 1);
  assert.is(parseRfc3339Ms("2026-01-01T00:00:02.291Z", "up"), base + 291, "whole milliseconds do not move");
  assert.is(parseRfc3339Ms("2026-01-01T00:00:02.291000000Z", "up"), base + 291);
  assert.is(parseRfc3339Ms("2026-01-01T00:00:02.999999999Z"), base + 999);
  assert.is(parseRfc3339Ms("2026-01-01T00:00:02.999999999Z", "up"), base + 1000);
});

test("instants outside the years 0000–9999 in UTC are refused, however the offset wrote them", () => {
  assert.is(parseRfc3339Ms("9999-12-31T23:59:59-23:59"), undefined);
  assert.is(parseRfc3339Ms("0000-01-01T00:00:00+00:01"), undefined);
  assert.is(formatRfc3339(parseRfc3339Ms("9999-12-31T23:59:59.999Z")!), "9999-12-31T23:59:59.999Z");
  assert.is(formatRfc3339(parseRfc3339Ms("0000-01-01T00:00:00-01:00")!), "0000-01-01T01:00:00.000Z");
});

test.run();
