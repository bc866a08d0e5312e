// Preloaded into the conformance CLI (`node --import ./auth-header.mjs`): the CLI has no option for
// request headers, and every request to the broker's /mcp needs `Authorization: Bearer <token>`.
// This adds the header held in MCP_CONFORMANCE_AUTHORIZATION to each request the CLI makes, on the
// three paths it uses: global fetch() (the MCP SDK client and EventSource), undici's request() and
// node:http's request(). A request that sets its own Authorization header keeps it.
import { createRequire } from 'node:module';
import http from 'node:http';

const AUTHORIZATION = process.env.MCP_CONFORMANCE_AUTHORIZATION;
if (!AUTHORIZATION) throw new Error('auth-header.mjs: MCP_CONFORMANCE_AUTHORIZATION is not set');

const hasAuthorization = (headers) =>
  Object.keys(headers ?? {}).some((name) => name.toLowerCase() === 'authorization');

const realFetch = globalThis.fetch;
globalThis.fetch = (input, init = {}) => {
  const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
  if (!headers.has('authorization')) headers.set('authorization', AUTHORIZATION);
  return realFetch(input, { ...init, headers });
};

// undici is CommonJS: its exports object can be patched before the CLI's `import { request }` reads it.
const cli = new URL('./node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url);
const undici = createRequire(cli)('undici');
const realUndiciRequest = undici.request;
undici.request = (url, options = {}) => {
  if (Array.isArray(options.headers)) throw new Error('auth-header.mjs: header arrays are not handled');
  if (hasAuthorization(options.headers)) return realUndiciRequest(url, options);
  return realUndiciRequest(url, { ...options, headers: { ...options.headers, authorization: AUTHORIZATION } });
};

const realHttpRequest = http.request;
http.request = function (options, ...rest) {
  if (options && typeof options === 'object' && !(options instanceof URL) && !hasAuthorization(options.headers)) {
    options = { ...options, headers: { ...options.headers, authorization: AUTHORIZATION } };
  }
  return realHttpRequest.call(this, options, ...rest);
};
