// The rules a route's directives must meet together (docs/spoolfile.md "Routes"), checked once its
// block is read: labels in pairs, one publish form, and what each channel takes.
import type { Arg, Directive } from "../../grammar/index.js";
import { spanOf, type CompileContext } from "../context.js";
import type { ChannelKind } from "../ir.js";
import type { RouteDraft } from "./route-draft.js";

export function checkRouteDraft(cx: CompileContext, draft: RouteDraft, d: Directive, pathArg: Arg, path: string | undefined, channel: ChannelKind): void {
  checkLabelPair(cx, draft, d);
  checkPublishForms(cx, draft);
  checkChannel(cx, draft, pathArg, channel);
  checkPullOrDeliver(cx, draft, d, pathArg, path, channel);
}

/** application and endpoint_name are set together. */
function checkLabelPair(cx: CompileContext, draft: RouteDraft, d: Directive): void {
  // Only when one was not written at all: an invalid value has its own error already.
  // The missing one misspelt (`endpoint_nam`) has its own error.
  const missingLabel = draft.labelsWritten.has("application") ? "endpoint_name" : "application";
  if (draft.labelsWritten.size === 1 && draft.labelSpan && !cx.failedWithin(d, missingLabel)) {
    cx.error(spanOf(draft.labelSpan), "missing_directive", "application and endpoint_name set together", "application and endpoint_name must be set together");
  }
}

/** One of `publish on|off`, `publish.direct`/`publish.managed`, or a publish block. */
function checkPublishForms(cx: CompileContext, draft: RouteDraft): void {
  const forms = draft.publishForms;
  if (forms.has("shorthand") && (forms.has("dotted") || forms.has("block"))) {
    cx.error(
      spanOf(forms.get("dotted") ?? forms.get("block")!),
      "conflict",
      "either publish on|off, or publish.direct/publish.managed, or a publish block",
      "publish: the shorthand publish on|off cannot be mixed with publish.direct/publish.managed or a publish block",
    );
  }
  if (forms.has("dotted") && forms.has("block")) {
    cx.error(spanOf(forms.get("dotted")!), "conflict", "either publish.direct/publish.managed or a publish block", "publish: publish.direct/publish.managed cannot be mixed with a publish block");
  }
}

/**
 * Channel rules: outbound needs deliver and takes no ingress criteria; internal needs pull;
 * neither takes auth, match or rate_limit.
 */
function checkChannel(cx: CompileContext, draft: RouteDraft, pathArg: Arg, channel: ChannelKind): void {
  if (channel !== "inbound") {
    for (const x of draft.forbidden) {
      const what = `${x.name!.value} on an ${channel} route (it receives no ingress traffic)`;
      cx.error(spanOf(x), "not_allowed_here", `no ${what}`, `${x.name!.value} is not allowed on an ${channel} route (it receives no ingress traffic)`);
    }
  }
  if (channel === "outbound" && draft.pull) {
    cx.error(spanOf(draft.pull.directive), "not_allowed_here", "no pull on an outbound route: outbound routes deliver", "pull is not allowed on an outbound route: outbound routes deliver");
  }
  if (channel === "internal" && draft.deliverCount > 0) {
    cx.error(pathArg.span, "not_allowed_here", "no deliver on an internal route: internal routes are pulled", "deliver is not allowed on an internal route: internal routes are pulled");
  }
}

/** A route is pulled or delivered, never both, and one of them is there. */
function checkPullOrDeliver(cx: CompileContext, draft: RouteDraft, d: Directive, pathArg: Arg, path: string | undefined, channel: ChannelKind): void {
  const { pull, deliverCount } = draft;
  if (pull && deliverCount > 0) cx.error(spanOf(pull.directive), "conflict", "either pull or deliver on one route", "a route is either pulled or delivered: remove pull or deliver");
  // A pull or deliver that is there but misspelt or invalid has its own error.
  if (!pull && deliverCount === 0 && d.block && !cx.failedWithin(d, "pull", "deliver")) {
    const internal = channel === "internal";
    const expected = internal ? "pull { path … }" : "pull { path … } or at least one deliver target";
    cx.error(pathArg.span, "missing_directive", expected, internal ? "internal route needs pull { path … }" : `route ${path ?? pathArg.value} needs pull { path … } or at least one deliver target`);
  }
  if (draft.deliverConcurrency !== null && deliverCount === 0) {
    cx.error(pathArg.span, "not_allowed_here", "deliver_concurrency only on a route with deliver targets", "deliver_concurrency needs deliver targets");
  }
}
