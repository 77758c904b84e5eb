// The AssemblyScript runtime linked into every compiled rule module: the ABI mirror, byte-range
// string primitives, glob/pmatch, regex DFAs, transformers and thread-entry walks. Generated rule code
// (host/engine/codegen) imports from here and uses only load/store, locals and scalars.
export * from './abi';
export * from './strings';
export * from './glob';
export * from './transform';
export * from './thread';
export * from './dfa';
