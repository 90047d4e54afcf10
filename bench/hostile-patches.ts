// Hostile PATCH cases for bench/hostile.ts (JSON, merge, strategic and apply patches).
import type { HostileCase } from './hostile.ts';

export const patchCases: HostileCase[] = [];
