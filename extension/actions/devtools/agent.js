// The tools' agent in a tab's page: the snapshot's code (page/snapshot.js with page/items.js,
// page/roles.js, page/names.js and page/yaml.js), made once per isolated world on its first call and kept there, with the refs
// it gave, for as long as the world lives (one document, one debugger session). The page's own
// scripts share the DOM with it but not its globals, so they can neither see nor change it.

import { OBJECT_GROUP, send } from "./debugger.js";
import { ActionError, Code } from "../../base/errors.js";
import { pageItems } from "../page/items.js";
import { accessibleNames } from "../page/names.js";
import { ariaRules } from "../page/roles.js";
import { snapshotAgent } from "../page/snapshot.js";
import { yamlRenderer } from "../page/yaml.js";

// Sent with every call, as the world may be new; the page parses it only when it makes the agent.
const AGENT = `(globalThis.__browserMcpAgent ??= (${snapshotAgent})(${pageItems}, ${ariaRules}, ${accessibleNames}, ${yamlRenderer}))`;

/**
 * Call the agent's `method` in the isolated world `world` of the tab `tabId` (or of a frame's
 * session, as debugger.js's `send` takes it) with `args` (protocol CallArguments,
 * elements as {objectId}): its JSON value; when `byValue` is false, an object it answers with
 * comes as {objectId} (a handle in OBJECT_GROUP), anything else as its value.
 */
export async function callAgent(tabId, world, method, args, byValue = true) {
  const { result, exceptionDetails } = await send(tabId, "Runtime.callFunctionOn", {
    functionDeclaration: `function (...args) { return ${AGENT}.${method}(...args); }`,
    executionContextId: world,
    arguments: args,
    returnByValue: byValue,
    objectGroup: OBJECT_GROUP,
  });
  if (exceptionDetails) {
    const reason = exceptionDetails.exception?.description ?? exceptionDetails.text;
    throw new ActionError(Code.ACTION_FAILED, `the page's snapshot code failed: ${reason.split("\n")[0]}`);
  }
  return result.objectId ? { objectId: result.objectId } : result.value;
}
