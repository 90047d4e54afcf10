// Part of `npm run build`: copies the files the compiled modules read at run time (the protobuf
// schemas beside their modules) from src/ into dist/, at the same relative paths.
import { cpSync, statSync } from 'node:fs';

cpSync('src', 'dist', { recursive: true, filter: (path) => statSync(path).isDirectory() || path.endsWith('.proto') });
