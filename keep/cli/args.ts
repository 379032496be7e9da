// Option values exactly as typed. cac's parser (mri) turns numeric-looking values into numbers
// ("007" → 7), so every value option is re-read from argv as text.

/** The text given for `--flag value` or `--flag=value` (the last one), or undefined. */
export function givenValue(args: readonly string[], flag: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--") break;
    if (args[i] === `--${flag}` && i + 1 < args.length) value = args[++i];
    else if (args[i].startsWith(`--${flag}=`)) value = args[i].slice(flag.length + 3);
  }
  return value;
}

export class UsageError extends Error {}

/** The value of a required option, as typed. */
export function required(args: readonly string[], flag: string): string {
  const value = givenValue(args, flag);
  if (value === undefined || value === "") throw new UsageError(`--${flag} is required`);
  return value;
}
