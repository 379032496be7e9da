// Child processes of the release script: npm (the one running us, when started by `npm run`) and git.
import { execFileSync } from "node:child_process";

/** Runs npm in `cwd` and returns its stdout; npm's own stderr passes through. */
export function npm(args, cwd, env = process.env) {
  const cli = process.env.npm_execpath;
  const [file, argv] = cli && /\.c?js$/.test(cli) ? [process.execPath, [cli, ...args]] : ["npm", args];
  return execFileSync(file, argv, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 256 << 20 });
}

/** git's answer in `cwd`, trimmed; undefined outside a repository. */
export function git(args, cwd) {
  try {
    return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return undefined;
  }
}
