// The audit log backend in each `--audit-log-mode`: blocking gathers a turn's lines into one write
// (at once past 1 MiB, and at close and process exit), blocking-strict writes each line as it comes
// and says when it could not, batch writes in the background from a bounded queue. When the disk
// refuses a write the events are lost and reported once per run of failures; nothing is thrown into
// the request that produced them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { auditLogBackend } from '../../src/server/audit/log-backend.ts';
import { parseArgs } from '../../src/server/cli.ts';
import { tempDir } from '../support/tmp.ts';
import { tsLoader } from '../support/ts-loader.ts';

const turn = () => new Promise((r) => setImmediate(r));
const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);

test('a full disk (/dev/full, Linux) loses events without throwing, reported once', async () => {
  const reported: string[] = [];
  const log = auditLogBackend({ path: '/dev/full' }, (m) => reported.push(m));
  for (let i = 0; i < 5; i++) {
    assert.doesNotThrow(() => log.write(`{"event":${i}}`));
    await turn();
  }
  assert.equal(reported.length, 1);
  assert.match(reported[0]!, /^audit log \/dev\/full: events are lost: ENOSPC/);
  log.close();
});

test('blocking: the lines of one turn are written together at its end, in order; past 1 MiB at once; the rest at close', async () => {
  const path = join(tempDir('audit-log-blocking'), 'audit.log');
  const log = auditLogBackend({ path, mode: 'blocking' });
  for (let i = 0; i < 3; i++) assert.equal(log.write(`{"event":${i}}`), true);
  assert.deepEqual(lines(path), [], 'nothing is written while the turn goes on');
  await turn();
  assert.deepEqual(lines(path), ['{"event":0}', '{"event":1}', '{"event":2}']);
  const big = `{"big":"${'x'.repeat(600 * 1024)}"}`;
  log.write(big);
  log.write(big);
  assert.equal(lines(path).length, 5, 'past 1 MiB waiting, the lines are written without waiting for the turn to end');
  log.write('{"event":"last"}');
  log.close();
  assert.equal(lines(path).at(-1), '{"event":"last"}', 'closing writes what waits');
  assert.equal(log.write('{"event":"after"}'), false);
  await turn();
  assert.equal(lines(path).length, 6);
});

test('blocking: lines of any characters and sizes are written byte for byte, in order, whether gathered or written on their own', async () => {
  const path = join(tempDir('audit-log-bytes'), 'audit.log');
  const log = auditLogBackend({ path, mode: 'blocking' });
  const sent: string[] = [];
  const send = (l: string) => {
    sent.push(l);
    assert.equal(log.write(l), true);
  };
  send('{"user":"é日本🎉"}');
  // Lines that together come near the buffer's size, then one too large to be gathered.
  for (let i = 0; i < 4; i++) send(`{"n":${i},"pad":"${'ü'.repeat(100 * 1024)}"}`);
  send(`{"huge":"${'🎉'.repeat(200 * 1024)}"}`);
  send('{"after":"the huge one"}');
  await turn();
  send('{"last":true}');
  log.close();
  assert.deepEqual(lines(path), sent);
});

for (const [mode, maxSizeMB] of [['blocking', 0], ['blocking', 1], ['blocking-strict', 0], ['batch', 0], ['batch', 1]] as const) {
  test(`${mode}${maxSizeMB ? ' (rotating)' : ''}: lines given as bytes are written as given, in order with lines given as strings, whatever their size`, async () => {
    const dir = tempDir(`audit-log-bytes-${mode}-${maxSizeMB}`);
    const path = join(dir, 'audit.log');
    const log = auditLogBackend({ path, mode, maxSizeMB });
    const sent: string[] = [];
    // One buffer used again for every line, as the audit's events come (the backend must copy).
    const scratch = Buffer.alloc(4 * 1024 * 1024);
    const asBytes = (l: string) => {
      sent.push(l);
      const n = scratch.write(l, 0, 'utf8');
      assert.equal(log.writeBytes(scratch, n), true);
      scratch.fill(0x78, 0, n);
    };
    const asText = (l: string) => {
      sent.push(l);
      assert.equal(log.write(l), true);
    };
    asBytes('{"user":"é日本🎉"}');
    asText('{"text":1}');
    for (let i = 0; i < 3; i++) asBytes(`{"n":${i},"pad":"${'ü'.repeat(150 * 1024)}"}`);
    asBytes(`{"huge":"${'🎉'.repeat(400 * 1024)}"}`);
    asBytes('{"after":"the huge one"}');
    await turn();
    asBytes('{"last":true}');
    await log.close();
    const files = readdirSync(dir).sort();
    assert.deepEqual(files.flatMap((f) => lines(join(dir, f))), sent);
    assert.equal(log.writeBytes(scratch, 2), false, 'after close');
  });
}

test('blocking: what waits is written when the process exits', () => {
  const path = join(tempDir('audit-log-exit'), 'audit.log');
  const module = new URL('../../src/server/audit/log-backend.ts', import.meta.url).href;
  const script = `import { auditLogBackend } from ${JSON.stringify(module)};
const log = auditLogBackend({ path: ${JSON.stringify(path)} });
for (let i = 0; i < 100; i++) log.write(JSON.stringify({ event: i }));
process.exit(0);`;
  execFileSync(process.execPath, [...tsLoader, '--input-type=module', '-e', script], { stdio: 'pipe' });
  assert.deepEqual(lines(path), Array.from({ length: 100 }, (_, i) => `{"event":${i}}`));
});

test('batch: what is queued is written when the process exits', () => {
  const path = join(tempDir('audit-log-exit-batch'), 'audit.log');
  const module = new URL('../../src/server/audit/log-backend.ts', import.meta.url).href;
  // Batches that never fill and wait 30 s: only the exit writes them.
  const script = `import { auditLogBackend } from ${JSON.stringify(module)};
const log = auditLogBackend({ path: ${JSON.stringify(path)}, mode: 'batch', batchMaxSize: 1000, batchMaxWaitMs: 30000 });
for (let i = 0; i < 50; i++) log.write(JSON.stringify({ event: i }));
for (let i = 50; i < 100; i++) { const b = Buffer.from(JSON.stringify({ event: i }) + 'junk'); log.writeBytes(b, b.length - 4); }
process.exit(0);`;
  execFileSync(process.execPath, [...tsLoader, '--input-type=module', '-e', script], { stdio: 'pipe' });
  assert.deepEqual(lines(path), Array.from({ length: 100 }, (_, i) => `{"event":${i}}`));
});

test('blocking: a turn that passes the size is split where a line would pass it, and rotated there', async () => {
  const dir = tempDir('audit-log-rotate-turn');
  const path = join(dir, 'audit.log');
  const log = auditLogBackend({ path, maxSizeMB: 1 });
  const line = (i: number) => `{"event":${i},"pad":"${'x'.repeat(400 * 1024)}"}`;
  for (let i = 0; i < 3; i++) log.write(line(i));
  await turn();
  log.close();
  const files = readdirSync(dir).sort();
  assert.equal(files.length, 2, files.join(' '));
  const backup = files.find((f) => f !== 'audit.log')!;
  assert.deepEqual(lines(join(dir, backup)).map((l) => (JSON.parse(l) as { event: number }).event), [0, 1]);
  assert.deepEqual(lines(path).map((l) => (JSON.parse(l) as { event: number }).event), [2]);
});

for (const mode of ['blocking-strict', 'batch'] as const) {
  test(`${mode}: rotated where a line would pass the size; lines of any characters written byte for byte, in order`, async () => {
    const dir = tempDir(`audit-log-rotate-${mode}`);
    const path = join(dir, 'audit.log');
    const log = auditLogBackend({ path, maxSizeMB: 1, mode, batchMaxSize: 2 });
    // 3 × 400 KB of ü (2 bytes each in UTF-8): a line past 1 MiB from the second on.
    const sent = [0, 1, 2, 3, 4].map((i) => `{"event":${i},"pad":"${'ü'.repeat(200 * 1024)}","user":"é日本🎉"}`);
    for (const l of sent) assert.equal(log.write(l), true);
    await log.close();
    const files = readdirSync(dir).sort();
    assert.equal(files.length, 3, files.join(' '));
    const written = files.map((f) => lines(join(dir, f)));
    // Backups sort by time before audit.log ('-' < '.'): the oldest first.
    assert.deepEqual(written.flat(), sent);
    assert.deepEqual(written.map((w) => w.length), [2, 2, 1]);
  });
}

test('blocking-strict: each line is written as it comes; a write the disk refuses answers false, reported once', () => {
  const path = join(tempDir('audit-log-strict'), 'audit.log');
  const log = auditLogBackend({ path, mode: 'blocking-strict' });
  assert.equal(log.write('{"event":0}'), true);
  assert.deepEqual(lines(path), ['{"event":0}'], 'written before write returns');
  log.close();
  const reported: string[] = [];
  const full = auditLogBackend({ path: '/dev/full', mode: 'blocking-strict' }, (m) => reported.push(m));
  assert.equal(full.write('{"event":0}'), false);
  assert.equal(full.write('{"event":1}'), false);
  assert.equal(reported.length, 1);
  full.close();
});

test('batch: lines are queued and written in the background in batches; past the buffer they are dropped and reported; close writes the rest', async () => {
  const path = join(tempDir('audit-log-batch'), 'audit.log');
  const reported: string[] = [];
  const log = auditLogBackend({ path, mode: 'batch', batchBufferSize: 5, batchMaxSize: 3, batchMaxWaitMs: 30_000 }, (m) => reported.push(m));
  // The first three make a batch, whose write starts at once; the next five fill the buffer; the last two are dropped.
  for (let i = 0; i < 10; i++) assert.equal(log.write(`{"event":${i}}`), true, 'a full buffer loses the event, not the request');
  assert.equal(reported.length, 1);
  assert.match(reported[0]!, /the buffer is full; events are dropped/);
  for (let i = 0; i < 400 && lines(path).length < 3; i++) await new Promise((r) => setTimeout(r, 5));
  const expected = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => `{"event":${i}}`);
  const early = lines(path);
  assert.deepEqual(early, expected.slice(0, early.length), 'whole batches, in order, written in the background');
  await log.close();
  assert.deepEqual(lines(path), expected);
});

test('batch: the whole batches that queue during a write go out together in the next, so a busy server loses nothing', async () => {
  const path = join(tempDir('audit-log-batch-behind'), 'audit.log');
  const reported: string[] = [];
  // Batches of one event (the default): the first is written at once, the 250 that follow queue
  // behind it (3.5 KB: the next write fills less than a page, which a reader sees whole or not at all).
  const log = auditLogBackend({ path, mode: 'batch', batchBufferSize: 250 }, (m) => reported.push(m));
  for (let i = 0; i <= 250; i++) log.write(`{"event":${i}}`);
  let seen = lines(path);
  for (let i = 0; i < 20_000 && seen.length <= 1; i++) {
    await turn();
    seen = lines(path);
  }
  // A write per event would show the queue draining one line at a time.
  assert.equal(seen.length, 251, 'the queued events in the write after the first');
  assert.deepEqual(seen.slice(0, 3), ['{"event":0}', '{"event":1}', '{"event":2}']);
  assert.equal(seen.at(-1), '{"event":250}');
  assert.deepEqual(reported, []);
  await log.close();
});

test('batch: a batch that does not fill is written when its first line has waited batchMaxWait', async () => {
  const path = join(tempDir('audit-log-batch-wait'), 'audit.log');
  const log = auditLogBackend({ path, mode: 'batch', batchMaxSize: 100, batchMaxWaitMs: 20 });
  log.write('{"event":0}');
  log.write('{"event":1}');
  await turn();
  assert.deepEqual(lines(path), []);
  for (let i = 0; i < 400 && lines(path).length < 2; i++) await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(lines(path), ['{"event":0}', '{"event":1}']);
  await log.close();
});

test('--audit-log-mode takes blocking, blocking-strict and batch, with the batch flags; --audit-webhook-mode batch, blocking and blocking-strict', () => {
  const opts = parseArgs(['--audit-log-path=/x.log', '--audit-log-mode=batch', '--audit-log-batch-buffer-size=7', '--audit-log-batch-max-size=3', '--audit-log-batch-max-wait=2s']);
  assert.notEqual(opts, 'help');
  assert.deepEqual(opts !== 'help' && opts.auditLog, { path: '/x.log', mode: 'batch', batchBufferSize: 7, batchMaxSize: 3, batchMaxWaitMs: 2000 });
  assert.throws(() => parseArgs(['--audit-log-mode=async']), /--audit-log-mode "async": must be one of blocking, blocking-strict, batch/);
  const hook = parseArgs(['--audit-webhook-config-file=/hook', '--audit-webhook-mode=blocking-strict']);
  assert.deepEqual(hook !== 'help' && hook.auditWebhook, { configFile: '/hook', mode: 'blocking-strict' });
  assert.throws(() => parseArgs(['--audit-webhook-mode=async']), /--audit-webhook-mode "async": must be one of batch, blocking, blocking-strict/);
});
