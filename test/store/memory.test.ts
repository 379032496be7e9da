import { openStore } from "../../runtime/store/open.js";
import { storeContract } from "./contract.js";

storeContract("memory", (clock, options) => openStore({ backend: "memory", ...options }, { clock })).run();
