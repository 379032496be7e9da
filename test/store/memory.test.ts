import { openStore } from "../../runtime/store/open.js";
import { storeContract } from "./contract.js";

storeContract("memory", (clock, options, observer) => openStore({ backend: "memory", ...options }, { clock, observer })).run();
