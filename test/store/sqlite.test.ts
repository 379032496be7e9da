import { join } from "node:path";
import { openStore } from "../../runtime/store/open.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { storeContract } from "./contract.js";

const dir = makeTempDir("store-sqlite");
let counter = 0;
process.on("exit", () => dir.cleanup());

storeContract("sqlite", (clock, options, observer) =>
  openStore({ backend: "sqlite", sqlitePath: join(dir.path, `contract-${++counter}.db`), ...options }, { clock, observer }),
).run();
