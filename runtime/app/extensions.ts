// The parts `spool run` mounts on the app's seams: the Admin API behind the admin token, the
// push/exec delivery service, and the trend signals of /healthz?details=1. Wiring only: each part
// is built by its own folder (runtime/admin/mount.ts, runtime/delivery/service.ts).
import { adminTrendSignals, mountAdminApi, type AdminMountOptions } from "../admin/mount.js";
import { createDeliveryService } from "../delivery/service.js";
import type { AppContext, AppDeps, AppService } from "./types.js";

/** What `spool run` gives the Admin API's mount (the file management rewrites, how it compiles, the audit sink). */
export type ExtensionOptions = AdminMountOptions;

export function spoolExtensions(options: ExtensionOptions): Pick<AppDeps, "admin" | "services" | "trendSignals"> {
  return {
    admin: (context: AppContext) => mountAdminApi(context, options),
    services: [(context: AppContext) => deliveryService(context)],
    trendSignals: (context: AppContext) => adminTrendSignals(context),
  };
}

function deliveryService(context: AppContext): AppService {
  const service = createDeliveryService({
    store: context.store,
    clock: context.clock,
    getMetrics: () => context.metrics.delivery,
    log: context.logger,
    tracing: context.tracing,
  });
  return {
    name: "delivery",
    start: () => service.start(context.config()),
    reconfigure: (config) => {
      try {
        service.reconfigure(config);
      } catch (error) {
        // The dispatcher refused the new targets; it keeps delivering with the previous ones.
        context.logger.error("delivery_reconfigure_failed", { error });
      }
    },
    stop: async (drainMs) => {
      await service.stop({ drainMs });
    },
  };
}
