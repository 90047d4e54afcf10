// The audit log backend when the disk refuses a write: the event is lost and reported once per
// run of failures; nothing is thrown into the request that produced it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { auditLogBackend } from '../../src/server/audit/log-backend.ts';

test('a full disk (/dev/full, Linux) loses events without throwing, reported once', () => {
  const reported: string[] = [];
  const log = auditLogBackend({ path: '/dev/full' }, (m) => reported.push(m));
  for (let i = 0; i < 5; i++) assert.doesNotThrow(() => log.write(`{"event":${i}}`));
  assert.equal(reported.length, 1);
  assert.match(reported[0]!, /^audit log \/dev\/full: events are lost: ENOSPC/);
  log.close();
});
