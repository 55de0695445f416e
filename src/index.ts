/** `sonde`: the core plus `Sonde`, the client with every engine. */
export * from "./core.js";
export { Sonde } from "./sonde.js";
