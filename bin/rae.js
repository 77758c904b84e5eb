#!/usr/bin/env node
// Entry point of the `rae` command. Runs the TypeScript sources through tsx's loader so that a
// fresh checkout needs no separate compile step.
import { register } from 'tsx/esm/api';
register();
const { main } = await import('../host/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
