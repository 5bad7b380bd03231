/** Raw parts: JSON text put back where its placeholder stands in an encoded message. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rawPart, spliceRaw } from '../../src/views/raw-parts.ts';

test('each part gets its own placeholder, and the encoded message gets the JSON text in its place', () => {
  const rows = rawPart('[{"a":1},{"a":"é"}]');
  const text = rawPart('"line one\\nline two"');
  assert.notEqual(rows.placeholder, text.placeholder);
  assert.match(rows.placeholder, /^tmd-raw-[0-9a-f-]{36}$/);
  const message = JSON.stringify({ content: [{ text: text.placeholder }], data: rows.placeholder, z: 'ß' });
  const out = spliceRaw(message, [rows, text]);
  assert.equal(out, '{"content":[{"text":"line one\\nline two"}],"data":[{"a":1},{"a":"é"}],"z":"ß"}');
  assert.deepEqual(JSON.parse(out).data, [{ a: 1 }, { a: 'é' }]);
});

test('a part whose placeholder is not in the message is left out; no parts leave it as it is', () => {
  const message = '{"a":"b"}';
  assert.equal(spliceRaw(message, [rawPart('1')]), message);
  assert.equal(spliceRaw(message, []), message);
});
