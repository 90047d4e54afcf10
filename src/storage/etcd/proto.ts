// Typed view of the slice of etcd's v3 gRPC API this backend uses, loaded at runtime from the .proto
// files shipped in the etcd3 package (we use its protos, not its client, so that failover, retries
// and watch multiplexing are under our control).
//
// Loader options: keepCase so field names match the .proto (and etcd's docs); longs as Number because
// revisions stay far below 2^53; defaults so absent proto3 scalars read as 0/false/empty instead of
// undefined; bytes as Buffer.
import { createRequire } from 'node:module';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

export interface ResponseHeader {
  cluster_id: number;
  member_id: number;
  revision: number;
  raft_term: number;
}

/** mvccpb.KeyValue */
export interface PbKeyValue {
  key: Buffer;
  create_revision: number;
  mod_revision: number;
  version: number;
  value: Buffer;
  lease: number;
}

export interface RangeRequest {
  key: Buffer;
  range_end?: Buffer;
  limit?: number;
  revision?: number;
  serializable?: boolean;
  keys_only?: boolean;
  count_only?: boolean;
}

export interface RangeResponse {
  header: ResponseHeader;
  kvs: PbKeyValue[];
  more: boolean;
  count: number;
}

export interface PutRequest {
  key: Buffer;
  value: Buffer;
  prev_kv?: boolean;
}

export interface PutResponse {
  header: ResponseHeader;
  prev_kv: PbKeyValue | null;
}

interface DeleteRangeRequest {
  key: Buffer;
  range_end?: Buffer;
  prev_kv?: boolean;
}

interface DeleteRangeResponse {
  header: ResponseHeader;
  deleted: number;
  prev_kvs: PbKeyValue[];
}

type RequestOp =
  | { request_range: RangeRequest }
  | { request_put: PutRequest }
  | { request_delete_range: DeleteRangeRequest };

/** With `oneofs: true` the loader names the populated member in `response`. */
interface ResponseOp {
  response?: 'response_range' | 'response_put' | 'response_delete_range' | 'response_txn';
  response_range?: RangeResponse | null;
  response_put?: PutResponse | null;
  response_delete_range?: DeleteRangeResponse | null;
}

export const CompareResult = { EQUAL: 0, GREATER: 1, LESS: 2, NOT_EQUAL: 3 } as const;
export const CompareTarget = { VERSION: 0, CREATE: 1, MOD: 2, VALUE: 3 } as const;

export interface Compare {
  result: (typeof CompareResult)[keyof typeof CompareResult];
  target: (typeof CompareTarget)[keyof typeof CompareTarget];
  key: Buffer;
  version?: number;
  create_revision?: number;
  mod_revision?: number;
}

export interface TxnRequest {
  compare: Compare[];
  success: RequestOp[];
  failure: RequestOp[];
}

export interface TxnResponse {
  header: ResponseHeader;
  succeeded: boolean;
  responses: ResponseOp[];
}

export interface CompactionRequest {
  revision: number;
  physical: boolean;
}

export interface CompactionResponse {
  header: ResponseHeader;
}

export interface StatusResponse {
  header: ResponseHeader;
  version: string;
  leader: number;
}

export const EventType = { PUT: 0, DELETE: 1 } as const;

export interface PbEvent {
  type: (typeof EventType)[keyof typeof EventType];
  kv: PbKeyValue | null;
  prev_kv: PbKeyValue | null;
}

interface WatchCreateRequest {
  key: Buffer;
  range_end: Buffer;
  start_revision?: number;
  progress_notify: boolean;
  prev_kv: boolean;
}

export type WatchRequest =
  | { create_request: WatchCreateRequest }
  | { cancel_request: { watch_id: number } }
  | { progress_request: Record<string, never> };

export interface WatchResponse {
  header: ResponseHeader;
  watch_id: number;
  created: boolean;
  canceled: boolean;
  compact_revision: number;
  cancel_reason: string;
  fragment: boolean;
  events: PbEvent[];
}

type Callback<Res> = (err: grpc.ServiceError | null, res?: Res) => void;
type Unary<Req, Res> = (
  req: Req,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  cb: Callback<Res>,
) => grpc.ClientUnaryCall;

export interface KVClient extends grpc.Client {
  Range: Unary<RangeRequest, RangeResponse>;
  Put: Unary<PutRequest, PutResponse>;
  Txn: Unary<TxnRequest, TxnResponse>;
  Compact: Unary<CompactionRequest, CompactionResponse>;
}

export interface WatchClient extends grpc.Client {
  Watch(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<WatchRequest, WatchResponse>;
}

export interface MaintenanceClient extends grpc.Client {
  Status: Unary<Record<string, never>, StatusResponse>;
}

type ClientCtor<C> = new (address: string, creds: grpc.ChannelCredentials, options?: grpc.ClientOptions) => C;

interface EtcdServices {
  KV: ClientCtor<KVClient>;
  Watch: ClientCtor<WatchClient>;
  Maintenance: ClientCtor<MaintenanceClient>;
}

let services: EtcdServices | undefined;

export function etcdServices(): EtcdServices {
  if (services) return services;
  const require = createRequire(import.meta.url);
  const protoDir = path.join(path.dirname(require.resolve('etcd3/package.json')), 'proto');
  const def = protoLoader.loadSync(path.join(protoDir, 'rpc.proto'), {
    keepCase: true,
    longs: Number,
    enums: Number,
    bytes: Buffer,
    defaults: true,
    oneofs: true,
    includeDirs: [protoDir],
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { etcdserverpb: EtcdServices };
  services = pkg.etcdserverpb;
  return services;
}
