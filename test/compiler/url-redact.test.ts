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

test("a protocol-relative URL's password is masked too", () => {
  assert.is(redactUrl('invalid redirect location "//u:RedirPw999@[bad"'), 'invalid redirect location "//u:(redacted)@[bad"');
  assert.is(redactUrl("//ops:pw@h.example/x?token=abc"), "//ops:(redacted)@h.example/x?token=(redacted)");
});

test("an unparsable URL's whole query is masked; an encoded = is a value", () => {
  assert.is(redactUrl('invalid redirect location "http://[bad/x?token%3DRedirTok999"'), 'invalid redirect location "http://[bad/x?(redacted)"');
  assert.is(redactUrl("https://h.example/x?token%3DTok1&plain"), "https://h.example/x?(redacted)&plain");
});

test("fragment values, ;-separated query values and ;name=value path parameters are masked", () => {
  assert.is(redactUrl("https://h.example/cb#access_token=Frag1&state=&x={env.X}"), "https://h.example/cb#access_token=(redacted)&state=&x={env.X}");
  assert.is(redactUrl("https://h.example/x;token=Semi1/y;v=?a=1;token=Semi2#frag"), "https://h.example/x;token=(redacted)/y;v=?a=(redacted);token=(redacted)#frag");
  assert.is(redactUrl("http://[::1]:8080/in?k=v"), "http://[::1]:8080/in?k=(redacted)");
});

test.run();
