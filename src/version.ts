/**
 * sqrl's version, from package.json (embedded at build time).
 */
import pkg from "../package.json" with { type: "json" };

/** sqrl's version, from package.json (embedded at build time). */
export const VERSION: string = pkg.version;
