export { hostedAdapter } from "./adapter.js";
