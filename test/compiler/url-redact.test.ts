import { suite } from "uvu";
import * as assert from "uvu/assert";
import { redactUrl } from "../../compiler/url-redact.js";

const test = suite("url redaction");

test("a URL's password and query values are masked; user, host, path, names and placeholders stay", () => {
  assert.is(redactUrl("https://ops:hunter2@hooks.example/in?token=abc123&tag=&key={env.KEY}"), "https://ops:(redacted)@hooks.example/in?token=(redacted)&tag=&key={env.KEY}");
});

test("URLs inside a text are masked where they appear and the rest is left alone", () => {
  assert.is(redactUrl('invalid redirect location "http://h.example/a?sig=s3cr3t" from http://x.example/b'), 'invalid redirect location "http://h.example/a?sig=(redacted)" from http://x.example/b');
});

test("a {$X:default}'s default is masked, the name stays", () => {
  assert.is(redactUrl("https://a.example/hook/{$NOPE:DefTok444}?x={$Y}"), "https://a.example/hook/{$NOPE:(redacted)}?x={$Y}");
});

test.run();
