// The oracle of tests/ai_sdk_format/test_ai_sdk_oracle.py: the AI SDK's own
// `safeValidateUIMessages` (package `ai`, the one `turnspec ai-sdk install` puts in the
// folder given as argv[2]) run over each conversation of a JSON array read from stdin, or,
// for a conversation of ModelMessages (some message has `content`, none `parts`), the
// SDK's exported `modelMessageSchema` on each message of a non-empty array; prints a JSON
// array of {"ok": bool, "error": string|null}, one per conversation.
'use strict';
const { createRequire } = require('module');
const path = require('path');
const req = createRequire(path.join(process.argv[2], 'node_modules', 'ai', 'package.json'));
const { safeValidateUIMessages, modelMessageSchema } = req('ai');
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', async () => {
  const out = [];
  for (const messages of JSON.parse(Buffer.concat(chunks).toString('utf8'))) {
    const objects = Array.isArray(messages) ? messages.filter((m) => m && typeof m === 'object') : [];
    if (objects.some((m) => 'content' in m) && !objects.some((m) => 'parts' in m)) {
      const bad = messages.map((m) => modelMessageSchema.safeParse(m)).find((r) => !r.success);
      out.push({ ok: bad === undefined, error: bad === undefined ? null : String(bad.error.message).slice(0, 300) });
      continue;
    }
    const r = await safeValidateUIMessages({ messages });
    out.push({ ok: r.success, error: r.success ? null : String(r.error.message).slice(0, 300) });
  }
  process.stdout.write(JSON.stringify(out));
});
