// Storing an accepted request: one message per fan-out copy, in one enqueue, and the 202 reply.
import { storeApiError } from "../errors.js";
import { abandonMessageIdStream } from "../store/ids.js";
import type { RuntimeLogger } from "../observability/log.js";
import type { NewMessage } from "../store/records.js";
import { StoreError, type Store } from "../store/store.js";
import { refuse, type IngressRefusal } from "./refusal.js";

/** Tries at storing a request's copies when generated ids turn out taken (a fresh stream each time). */
const MAX_ID_ATTEMPTS = 3;

/**
 * Stores every fan-out copy; returns their ids. A generated id can be taken already, by a message
 * published with an id chosen to match (publish takes its caller's ids): the sender is not refused
 * for that, the copies are made again with ids of a fresh stream (ids.ts).
 */
export async function storeCopies(deps: { store: Store; logger: RuntimeLogger }, copies: () => NewMessage[], routePath: string): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    const messages = copies();
    try {
      await deps.store.enqueue(messages);
      return messages.map((m) => m.id);
    } catch (error) {
      if (!(error instanceof StoreError && error.code === "duplicate_id") || attempt === MAX_ID_ATTEMPTS) throw storeRefusal(deps.logger, error, routePath);
      abandonMessageIdStream();
    }
  }
}

/** The refusal for a failed enqueue: full or memory-bound queues by name, anything else logged as store_unavailable. */
function storeRefusal(logger: RuntimeLogger, error: unknown, routePath: string): IngressRefusal {
  const answer = storeApiError(error, "ingress");
  // A full queue and the memory guard are expected refusals; anything else is an outage to log.
  if (answer.code === "store_unavailable") logger.error("ingress_store_failed", { route: routePath, error });
  return refuse(answer.code, answer);
}

/**
 * The 202 body, `{"status":"queued","ids":[…]}`, written out rather than passed through
 * JSON.stringify on every request: generated ids (ids.ts) are `evt_` and hex, nothing to escape.
 */
export function queuedReply(ids: readonly string[]): string {
  return `{"status":"queued","ids":["${ids.join('","')}"]}`;
}
