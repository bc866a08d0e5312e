// Listening in a tab's documents for the events input is about to cause (a drag's start, its
// drop, a wheel and the scroll it brings), so that the pointer's tools (pointer.js) answer once
// the page has taken their input: listeners in the tools' isolated worlds, which the page cannot
// see.

import { OBJECT_GROUP, send, utilityWorld } from "./debugger.js";
import { frameWorlds } from "./frames.js";

/**
 * Listen in the page, and in the frames the tab's snapshots went into, for events of `types` that
 * input is about to cause: the listeners sit in the tools' isolated worlds, where the page's
 * events reach them unseen, passive, so they never hold a scroll up. `ask(body)` runs `body` with
 * the record of what came as `this`, in each document, and tells whether any answered true.
 */
export async function watchPage(tabId, types) {
  const documents = [{ target: tabId, world: await utilityWorld(tabId) }, ...frameWorlds(tabId)];
  const watchers = await Promise.all(documents.map((document) => watchDocument(document, types).catch(() => null)));
  const asking = (body) => watchers.filter(Boolean).map((ask) => ask(body).catch(() => false));
  const ask = async (body) => (await Promise.all(asking(body))).some(Boolean);
  return { ask, stop: () => Promise.all(asking("this.stop();")) };
}

/** watchPage's listeners in one document: `ask(body)`, its answer. */
async function watchDocument({ target, world }, types) {
  const { result } = await send(target, "Runtime.evaluate", {
    expression: `((types) => {
      const seen = {};
      const waiting = new Set();
      const record = (event) => {
        seen[event.type] = event;
        for (const waiter of [...waiting]) waiter(event);
      };
      for (const type of types) addEventListener(type, record, { capture: true, passive: true });
      return {
        seen,
        came(type, ms) {
          if (seen[type]) return Promise.resolve(true);
          return new Promise((done) => {
            const finish = (came) => { waiting.delete(waiter); clearTimeout(timer); done(came); };
            const waiter = (event) => { if (event.type === type) finish(true); };
            const timer = setTimeout(() => finish(false), ms);
            waiting.add(waiter);
          });
        },
        stop() {
          for (const type of types) removeEventListener(type, record, { capture: true, passive: true });
        },
      };
    })(${JSON.stringify(types)})`,
    contextId: world,
    objectGroup: OBJECT_GROUP,
  });
  return async (body) =>
    (
      await send(target, "Runtime.callFunctionOn", {
        objectId: result.objectId,
        functionDeclaration: `function () { ${body} }`,
        returnByValue: true,
        awaitPromise: true,
      })
    ).result.value;
}
