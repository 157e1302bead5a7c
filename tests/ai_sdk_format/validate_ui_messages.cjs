// The oracle of tests/ai_sdk_format/test_ai_sdk_oracle.py: the AI SDK's own
// `safeValidateUIMessages` (package `ai`, the one `turnspec ai-sdk install` puts in the
// folder given as argv[2]) run over each conversation of a JSON array read from stdin;
// prints a JSON array of {"ok": bool, "error": string|null}, one per conversation.
'use strict';
const { createRequire } = require('module');
const path = require('path');
const req = createRequire(path.join(process.argv[2], 'node_modules', 'ai', 'package.json'));
const { safeValidateUIMessages } = req('ai');
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', async () => {
  const out = [];
  for (const messages of JSON.parse(Buffer.concat(chunks).toString('utf8'))) {
    const r = await safeValidateUIMessages({ messages });
    out.push({ ok: r.success, error: r.success ? null : String(r.error.message).slice(0, 300) });
  }
  process.stdout.write(JSON.stringify(out));
});
