#!/usr/bin/env node
// The forgelog command: the TypeScript sources compiled to JavaScript once per version of
// them (bin/compile.js); through tsx's loader where no build can be written.
import { compiledMain } from './compile.js';

const main = await compiledMain();
if (main) {
  await import(main);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
