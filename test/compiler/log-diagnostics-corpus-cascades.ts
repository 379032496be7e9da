// More of the corpus (log-diagnostics-corpus.ts): misspelt or failed statements that other checks
// depend on, each reported once rather than again by every check that misses it.
import { MISTAKES, target, type CorpusCase } from "./log-diagnostics-corpus.js";

const CASCADES: readonly CorpusCase[] = [
  {
    name: "a misspelt pull_api block does not make every pulled route tokenless",
    text: `pull_apix { auth token raw:Qz43PullToken }\n/a { pull { path /a } }\n`,
    secrets: ["Qz43PullToken"],
    subject: "top level",
    expected: "a route (/path { … }), @matcher",
    suggestion: "pull_api",
  },
  {
    name: "a misspelt vars block does not make its vars unknown where they are used",
    text: `varsx { BASE "https://qz44.example" }\n/a { deliver "{vars.BASE}/in?token=Qz44Tok" }\n`,
    secrets: ["qz44.example", "Qz44Tok"],
    subject: "top level",
    expected: "a route (/path { … }), @matcher",
    suggestion: "vars",
  },
  {
    name: "an unknown variable in a URL is reported once, not again as a bad URL",
    text: `vars { BASE "https://qz45.example" }\n/a { deliver "{vars.BASEX}/in?token=Qz45Tok" }\n`,
    secrets: ["qz45.example", "Qz45Tok"],
    subject: "route /a › deliver",
    expected: "a variable defined in the vars block",
  },
  {
    name: "a misspelt pull does not leave the route without pull or deliver",
    text: `/a {\n  pul { path /a; auth token raw:Qz46Token }\n}\n`,
    secrets: ["Qz46Token"],
    subject: "route /a",
    expected: "one of: application, endpoint_name, match,",
    suggestion: "pull",
  },
  {
    name: "a misspelt endpoint_name does not leave application alone",
    text: `/a {\n  application "qz47app"\n  endpoint_nam "qz47ep"\n  ${target("Qz47Tok")}\n}\n`,
    secrets: ["qz47app", "qz47ep", "Qz47Tok"],
    subject: "route /a",
    expected: "one of: application, endpoint_name, match,",
    suggestion: "endpoint_name",
  },
  {
    name: "a misspelt secret statement does not make its ID unknown where it is referenced",
    text: `secrets { secrt "s1" { value raw:Qz48Signing } }\n/a { ${target("Qz48Tok", 'sign hmac secret_ref "s1"')} }\n`,
    secrets: ["Qz48Signing", "Qz48Tok"],
    subject: "secrets",
    expected: "one of: secret",
    suggestion: "secret",
  },
  {
    name: "a misspelt pull path is not also a missing one",
    text: `/a {\n  pull { pth /a; auth token raw:Qz49Token }\n}\n`,
    secrets: ["Qz49Token"],
    subject: "route /a › pull",
    expected: "one of: path, auth",
    suggestion: "path",
  },
  {
    name: "a misspelt rps is not also a missing one",
    text: `ingress { rate_limit { rsp 50; burst 100 } }\n/a { ${target("Qz50Tok")} }\n`,
    secrets: ["Qz50Tok"],
    subject: "ingress › rate_limit",
    expected: "one of: rps, burst",
    suggestion: "rps",
  },
  {
    name: "a misspelt ingress block does not collide with another listener at ingress's default",
    text: `ingres { listen 127.0.0.1:9443 }\npull_api { listen :8080; auth token raw:Qz51Token }\n/a { pull { path /a } }\n`,
    secrets: ["Qz51Token"],
    subject: "top level",
    expected: "a route (/path { … }), @matcher",
    suggestion: "ingress",
  },
  {
    name: "a misspelt prefix on a shared listener is not also a missing one",
    text: `ingress { listen :8080 }\npull_api { listen :8080; prefx /pull; auth token raw:Qz52Token }\n/a { pull { path /a } }\n`,
    secrets: ["Qz52Token"],
    subject: "pull_api",
    expected: "one of: listen, prefix, auth,",
    suggestion: "prefix",
  },
  {
    name: "a block without its opening brace is one error",
    text: `/a {\n  pull path /a; auth token raw:Qz53Token\n}\n`,
    secrets: ["Qz53Token"],
    subject: "route /a › pull",
    expected: "a block { … }",
  },
];

export const CORPUS: readonly CorpusCase[] = [...MISTAKES, ...CASCADES];
