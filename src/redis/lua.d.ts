/** Lua scripts are bundled as text (tsup `loader`, the vitest plugin in vitest.config.ts). */
declare module "*.lua" {
  const source: string;
  export default source;
}
