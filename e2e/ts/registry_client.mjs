// A client of the registry's MCP endpoint written with the official TypeScript MCP SDK (issue 20
// §4; docs/contract.md, "The registry's MCP endpoint"): finds a tool by intent across the fleet,
// calls it through the registry, then subscribes to an agent's health there and waits for a change.
//
//   node registry_client.mjs --modules DIR --url http://localhost:PORT/mcp --intent WORDS
//       --args JSON --watch pallas://agents/NAME/health
//
// DIR is a node_modules holding @modelcontextprotocol/sdk (e2e/setup.sh installs it). Prints
// `found: <name>`, `answer: <text>`, `subscribed: <status>`, then, once the resource's status
// changes, `updated: <json>`, and exits 0; exits 1 if no change comes within 60 s.
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const { values: args } = parseArgs({
  options: {
    modules: { type: 'string' },
    url: { type: 'string' },
    intent: { type: 'string' },
    args: { type: 'string' },
    watch: { type: 'string' },
  },
});

const sdk = (path) =>
  import(pathToFileURL(join(args.modules, '@modelcontextprotocol/sdk/dist/esm', path)).href);
const { Client } = await sdk('client/index.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { ResourceUpdatedNotificationSchema } = await sdk('types.js');

const client = new Client({ name: 'pallas-ts-registry-client', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(args.url)));

const found = await client.callTool({ name: 'find_tools', arguments: { query: args.intent } });
const hit = found.structuredContent.results[0].hits[0];
console.log(`found: ${hit.name}`);

const answer = await client.callTool({
  name: 'call_tool',
  arguments: { name: hit.name, arguments: JSON.parse(args.args) },
});
if (answer.isError) {
  throw new Error(answer.content[0].text);
}
console.log(`answer: ${answer.content[0].text}`);

const status = async () => {
  const read = await client.readResource({ uri: args.watch });
  return read.contents[0].text;
};
const first = JSON.parse(await status()).status;
const changed = new Promise((resolve) => {
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => {
    if (n.params.uri !== args.watch) {
      return;
    }
    const text = await status();
    if (JSON.parse(text).status !== first) {
      resolve(text);
    }
  });
});
await client.subscribeResource({ uri: args.watch });
console.log(`subscribed: ${first}`);

const timeout = new Promise((resolve) => setTimeout(() => resolve(null), 60_000));
const updated = await Promise.race([changed, timeout]);
await client.close();
if (updated === null) {
  console.log('no update within 60 s');
  process.exit(1);
}
console.log(`updated: ${updated}`);
