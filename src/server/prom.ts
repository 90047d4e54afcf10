// prom-client's registry and the three metric types the server uses, required one by one: the
// package's index also loads the default process metrics, summaries (with their quantile
// library), the push gateway client and the cluster aggregator, which together cost a start about
// ten times what these four modules do. The types are prom-client's own.

import { createRequire } from 'node:module';
import type * as Prom from 'prom-client';

const require = createRequire(import.meta.url);

export const Registry = require('prom-client/lib/registry') as typeof Prom.Registry;
export type Registry = Prom.Registry;
export const Counter = require('prom-client/lib/counter') as typeof Prom.Counter;
export type Counter<T extends string = string> = Prom.Counter<T>;
export const Gauge = require('prom-client/lib/gauge') as typeof Prom.Gauge;
export type Gauge<T extends string = string> = Prom.Gauge<T>;
export const Histogram = require('prom-client/lib/histogram') as typeof Prom.Histogram;
export type Histogram<T extends string = string> = Prom.Histogram<T>;
