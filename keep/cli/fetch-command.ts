// `keep fetch` (route A, keep/README.md): resolve the whole set, then — for `actions-env` — print
// every mask line and wait until it is flushed, then append the assignments to the env file in one
// write and fsync it. `dotenv` and `json` print the set on stdout for local use. Any failure exits
// 1 with a message on stderr naming paths, names and statuses (never a value), an empty stdout and
// the env file untouched.
import { accessSync, closeSync, constants, fstatSync, fsyncSync, ftruncateSync, openSync, readSync, statSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { formatAssignments, maskLines, runnerRefusesName } from "../consumer/actions-env.js";
import { optional, resolveSet } from "../consumer/deliver.js";
import { InputError, parseConsumerFlags } from "../consumer/inputs.js";
import { refuseNulValues, type FetchedSecret } from "../consumer/fetch-set.js";

const FORMATS = new Set(["actions-env", "dotenv", "json"]);

function writeOut(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (text === "") return resolve();
    process.stdout.write(text, (error) => (error ? reject(error) : resolve()));
  });
}

/** The env file must be a writable regular file, or a new file in a writable directory. */
function checkEnvFile(file: string): void {
  let isFile = false;
  try {
    const st = statSync(file);
    if (!st.isFile()) throw new InputError(`--github-env ${file} is not a regular file`);
    isFile = true;
  } catch (error) {
    if (error instanceof InputError) throw error;
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw new InputError(`cannot use --github-env ${file} (${(error as NodeJS.ErrnoException).code})`);
  }
  try {
    accessSync(isFile ? file : dirname(file), constants.W_OK);
  } catch (error) {
    throw new InputError(`cannot write --github-env ${file} (${(error as NodeJS.ErrnoException).code})`);
  }
}

/** Appends `text` in one write (an LF first when the file lacks a final one), then fsyncs. */
export function appendEnvFile(file: string, text: string): void {
  const fd = openSync(file, "a+", 0o600);
  try {
    const size = fstatSync(fd).size;
    let prefix = "";
    if (size > 0) {
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) prefix = "\n";
    }
    const data = Buffer.from(prefix + text, "utf8");
    try {
      let done = 0;
      while (done < data.length) done += writeSync(fd, data, done, data.length - done);
      fsyncSync(fd);
    } catch (error) {
      try {
        ftruncateSync(fd, size); // best effort: no half assignment stays behind
      } catch {
        /* the original error is what matters */
      }
      throw error;
    }
  } finally {
    closeSync(fd);
  }
}

function dotenvLine({ name, value }: FetchedSecret): string {
  // JSON string escaping inside double quotes: \" \\ \n \r \t and \uXXXX for other controls
  // (keep/docs/decisions.md: loaders that interpolate `${…}` must have it turned off).
  return `${name}=${JSON.stringify(value)}\n`;
}

export async function runFetch(args: readonly string[]): Promise<number> {
  let secrets: FetchedSecret[];
  let format: string;
  let envFile: string | undefined;
  try {
    const { values, rest } = parseConsumerFlags(args, ["format", "github-env"]);
    if (rest.length > 0 || args.includes("--")) throw new InputError("keep fetch takes no arguments after --");
    const given = optional(values, "format");
    if (given === undefined) throw new InputError("--format is required (actions-env, dotenv or json)");
    if (!FORMATS.has(given)) throw new InputError(`unknown --format ${JSON.stringify(given)} (actions-env, dotenv or json)`);
    format = given;
    envFile = optional(values, "github-env");
    if (format === "actions-env") {
      if (envFile === undefined) throw new InputError("--format actions-env requires --github-env FILE");
      checkEnvFile(envFile);
    } else if (envFile !== undefined) {
      throw new InputError(`--github-env is only for --format actions-env`);
    }
    secrets = await resolveSet(values, format === "actions-env" ? runnerRefusesName : undefined);
    if (format !== "json") refuseNulValues(secrets);
  } catch (error) {
    process.stderr.write(`keep fetch: ${(error as Error).message}\n`);
    return 1;
  }
  try {
    if (format === "actions-env") {
      await writeOut(maskLines(secrets.map((s) => s.value)));
      appendEnvFile(envFile as string, formatAssignments(secrets));
    } else if (format === "dotenv") {
      await writeOut(secrets.map(dotenvLine).join(""));
    } else {
      await writeOut(`${JSON.stringify(Object.fromEntries(secrets.map((s) => [s.name, s.value])))}\n`);
    }
  } catch (error) {
    process.stderr.write(`keep fetch: cannot write the output (${(error as NodeJS.ErrnoException).code ?? (error as Error).name})\n`);
    return 1;
  }
  return 0;
}
