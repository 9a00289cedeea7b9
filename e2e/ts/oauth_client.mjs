// A client of an agent that asks for OAuth tokens, written with the official TypeScript MCP SDK
// (issue 18 §6; docs/contract.md, "Authentication"): given only the agent's MCP URL and its
// client's id and secret, the SDK's client-credentials provider follows the agent's 401 to its
// Protected Resource Metadata (RFC 9728), discovers the issuer named there, obtains a token and
// calls send_message. The same call without a token is refused.
//
//   node oauth_client.mjs --modules DIR --url http://localhost:PORT/mcp --issuer ISSUER
//       --client-id ID --client-secret SECRET [--scope agents:call] --message TEXT
//
// DIR is a node_modules holding @modelcontextprotocol/sdk (e2e/setup.sh installs it). Prints
// `without a token: <the error>`, then `answer: <text>`; exits 0 when the call without a token was
// refused (401) and the one with a token answered with the message.
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const { values: args } = parseArgs({
  options: {
    modules: { type: 'string' },
    url: { type: 'string' },
    issuer: { type: 'string' },
    'client-id': { type: 'string' },
    'client-secret': { type: 'string' },
    scope: { type: 'string' },
    message: { type: 'string' },
  },
});

const sdk = (path) =>
  import(pathToFileURL(join(args.modules, '@modelcontextprotocol/sdk/dist/esm', path)).href);
const { Client } = await sdk('client/index.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { ClientCredentialsProvider } = await sdk('client/auth-extensions.js');

async function call(authProvider) {
  const client = new Client({ name: 'pallas-ts-oauth-client', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(args.url), { authProvider });
  try {
    await client.connect(transport);
    const result = await client.callTool({
      name: 'send_message',
      arguments: { message: args.message },
    });
    if (result.isError) {
      throw new Error(result.content[0].text);
    }
    return result.content[0].text;
  } finally {
    await client.close();
  }
}

let refused = false;
try {
  await call(undefined);
  console.log('without a token: answered');
} catch (e) {
  const text = `${e.name}: ${e.message}`.slice(0, 300);
  refused = /401|Unauthorized/.test(text);
  console.log(`without a token: ${text}`);
}
const provider = new ClientCredentialsProvider({
  clientId: args['client-id'],
  clientSecret: args['client-secret'],
  scope: args.scope,
  expectedIssuer: args.issuer,
});
const answer = await call(provider);
console.log(`answer: ${answer}`);
process.exit(refused && answer === args.message ? 0 : 1);
