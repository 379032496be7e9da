// --watch follows the config file through symlinks (a linked Spoolfile edited where it lives, a
// Kubernetes ConfigMap swapping its `..data` link) and ignores other files in the same directory.
import { mkdirSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { watchConfigFile, watchPoints } from "../../runtime/reload/watch.js";
import { makeTempDir } from "../helpers/temp-dir.js";

const temp = makeTempDir("reload-watch");
const test = suite("config file watch");
test.after(() => temp.cleanup());

let counter = 0;
/** A fresh directory by its real path (a temp dir reached through a link, as on macOS, adds watch points of its own). */
function freshDir(): string {
  const dir = join(realpathSync(temp.path), `case-${++counter}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

const asObject = (points: Map<string, Set<string>>) => Object.fromEntries([...points].map(([dir, names]) => [dir, [...names].sort()]));

/** Runs each step with a watcher open and returns how many change calls had been seen `ms` after each. */
async function callsAfterEach(path: string, steps: (() => void)[], ms = 400): Promise<number[]> {
  let calls = 0;
  const seen: number[] = [];
  const watcher = watchConfigFile(path, () => calls++, { debounceMs: 50 });
  try {
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (const step of steps) {
      step();
      await new Promise((resolve) => setTimeout(resolve, ms));
      seen.push(calls);
    }
    return seen;
  } finally {
    watcher.close();
  }
}

/** The change calls seen after `act`. */
const changesAfter = async (path: string, act: () => void) => (await callsAfterEach(path, [act], 600))[0];

test("watch points: the file's own entry, and each symlink's entry and target on the way", () => {
  const dir = freshDir();
  writeFileSync(join(dir, "Spoolfile"), "ingress { }\n");
  assert.equal(asObject(watchPoints(join(dir, "Spoolfile"))), { [dir]: ["Spoolfile"] });

  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, "src", "Real"), "ingress { }\n");
  symlinkSync("src/Real", join(dir, "Linked"));
  assert.equal(asObject(watchPoints(join(dir, "Linked"))), { [dir]: ["Linked"], [join(dir, "src")]: ["Real"] });

  // ConfigMap layout: Spoolfile -> ..data/Spoolfile, ..data -> ..v1 (a directory link).
  const cm = join(dir, "cm");
  mkdirSync(join(cm, "..v1"), { recursive: true });
  writeFileSync(join(cm, "..v1", "Spoolfile"), "ingress { }\n");
  symlinkSync("..v1", join(cm, "..data"));
  symlinkSync("..data/Spoolfile", join(cm, "Spoolfile"));
  assert.equal(asObject(watchPoints(join(cm, "Spoolfile"))), { [cm]: ["..data", "Spoolfile"], [join(cm, "..v1")]: ["Spoolfile"] });
});

test("a symlinked Spoolfile edited in place where it lives is seen", async () => {
  const dir = freshDir();
  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, "src", "Spoolfile"), "ingress { }\n");
  symlinkSync("src/Spoolfile", join(dir, "Spoolfile"));
  assert.ok((await changesAfter(join(dir, "Spoolfile"), () => writeFileSync(join(dir, "src", "Spoolfile"), "ingress { }\n# edited\n"))) >= 1);
});

test("a ConfigMap swap of ..data is seen, and so is an edit under the new target afterwards", async () => {
  const cm = freshDir();
  mkdirSync(join(cm, "..v1"));
  writeFileSync(join(cm, "..v1", "Spoolfile"), "ingress { }\n");
  symlinkSync("..v1", join(cm, "..data"));
  symlinkSync("..data/Spoolfile", join(cm, "Spoolfile"));
  const [afterSwap, afterEdit] = await callsAfterEach(join(cm, "Spoolfile"), [
    () => {
      mkdirSync(join(cm, "..v2"));
      writeFileSync(join(cm, "..v2", "Spoolfile"), "ingress { }\n# v2\n");
      symlinkSync("..v2", join(cm, "..data_tmp"));
      renameSync(join(cm, "..data_tmp"), join(cm, "..data"));
    },
    () => writeFileSync(join(cm, "..v2", "Spoolfile"), "ingress { }\n# v2 edited\n"),
  ]);
  assert.ok(afterSwap >= 1, "the swap");
  assert.ok(afterEdit > afterSwap, "an edit under the new target");
});

test("a linked directory removed and made again is watched afresh", async () => {
  const dir = freshDir();
  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, "src", "Spoolfile"), "ingress { }\n");
  symlinkSync("src/Spoolfile", join(dir, "Spoolfile"));
  const [afterRecreate, afterEdit] = await callsAfterEach(join(dir, "Spoolfile"), [
    () => {
      rmSync(join(dir, "src"), { recursive: true });
      mkdirSync(join(dir, "src"));
      writeFileSync(join(dir, "src", "Spoolfile"), "ingress { }\n# new\n");
    },
    () => writeFileSync(join(dir, "src", "Spoolfile"), "ingress { }\n# edited in the new directory\n"),
  ]);
  assert.ok(afterRecreate >= 1, "the removal and the new file");
  assert.ok(afterEdit > afterRecreate, "an edit in the recreated directory");
});

test("other files written beside the Spoolfile are not changes of it", async () => {
  const dir = freshDir();
  writeFileSync(join(dir, "Spoolfile"), "ingress { }\n");
  assert.is(await changesAfter(join(dir, "Spoolfile"), () => writeFileSync(join(dir, "access.log"), "line\n")), 0);
  assert.ok((await changesAfter(join(dir, "Spoolfile"), () => writeFileSync(join(dir, "Spoolfile"), "ingress { }\n#x\n"))) >= 1);
});

test.run();
