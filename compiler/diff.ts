import { createTwoFilesPatch, formatPatch, type StructuredPatch } from "diff";

/**
 * Past this many changed lines a line-by-line diff stops looking for the smallest one: its cost
 * grows with the edit distance times the length (20,000 different routes took minutes), and a
 * change that large reads no better hunk by hunk.
 */
const MAX_DIFF_EDIT_LINES = 2_000;

/** Unified diff of two (already formatted) texts; empty when they are equal. */
export function unifiedDiff(oldText: string, newText: string, oldName: string, newName: string, context = 3): string {
  if (oldText === newText) return "";
  return createTwoFilesPatch(oldName, newName, oldText, newText, "", "", { context, maxEditLength: MAX_DIFF_EDIT_LINES }) ?? wholeFilePatch(oldText, newText, oldName, newName);
}

/** One hunk replacing every old line with every new one: still a patch `patch` applies. */
function wholeFilePatch(oldText: string, newText: string, oldName: string, newName: string): string {
  const linesOf = (text: string, sign: string): string[] => {
    if (text === "") return [];
    const lines = text.replace(/\n$/, "").split("\n").map((line) => sign + line);
    return text.endsWith("\n") ? lines : [...lines, "\\ No newline at end of file"];
  };
  const removed = linesOf(oldText, "-");
  const added = linesOf(newText, "+");
  const count = (lines: string[]) => lines.filter((line) => !line.startsWith("\\")).length;
  const [oldLines, newLines] = [count(removed), count(added)];
  const patch: StructuredPatch = {
    oldFileName: oldName,
    newFileName: newName,
    oldHeader: "",
    newHeader: "",
    hunks: [{ oldStart: oldLines === 0 ? 0 : 1, oldLines, newStart: newLines === 0 ? 0 : 1, newLines, lines: [...removed, ...added] }],
  };
  return formatPatch(patch);
}
