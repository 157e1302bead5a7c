// The adapter's process: one exec protocol request per line on standard input, one answer
// per line on standard output, in order; diagnostics go to standard error only.
//
//   turnspec conform exec:turnspec-exec.toml     (runs `node dist/main.js`)

import { createInterface } from "node:readline";
import { isObject } from "./protocol.js";
import { Server } from "./server.js";

async function main(): Promise<number> {
  const server = new Server();
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  let n = 0;
  for await (const line of lines) {
    n += 1;
    if (line.trim() === "") {
      continue;
    }
    let request: unknown;
    try {
      request = JSON.parse(line);
    } catch (err) {
      process.stderr.write(`request line ${n} is not JSON: ${(err as Error).message}\n`);
      return 2;
    }
    if (!isObject(request)) {
      process.stderr.write(`request line ${n} is not a JSON object\n`);
      return 2;
    }
    process.stdout.write(JSON.stringify(server.answer(request)) + "\n");
    if (request.op === "shutdown") {
      break;
    }
  }
  lines.close();
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
    process.stdin.destroy();
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
