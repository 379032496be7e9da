// What `keep fetch` and `keep exec` share: flags → inputs → the whole set (keep/README.md,
// "Consumers"). Every refusal happens here, before any output, env file or child.
import { fetchSet, type FetchedSecret } from "./fetch-set.js";
import { InputError, loadConsumerInputs, parseConsumerFlags } from "./inputs.js";
import { connect } from "./transport.js";

/** Reads the inputs (flags, token file, CA) and fetches the set, or throws a KeepError. */
export async function resolveSet(values: Map<string, string[]>, nameCheck?: (name: string) => string | undefined): Promise<FetchedSecret[]> {
  const inputs = loadConsumerInputs(values);
  const conn = connect(inputs.url, inputs.token, inputs.ca, 30_000);
  try {
    return await fetchSet(conn, inputs.paths, nameCheck);
  } finally {
    conn.agent.destroy();
  }
}

/** The single value of an extra flag, or undefined; given twice is an error. */
export function optional(values: Map<string, string[]>, flag: string): string | undefined {
  const given = values.get(flag);
  if (!given) return undefined;
  if (given.length > 1) throw new InputError(`--${flag} was given more than once`);
  if (given[0] === "") throw new InputError(`--${flag} needs a value`);
  return given[0];
}
