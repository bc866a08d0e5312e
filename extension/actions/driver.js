// The page driver the built-in tools run on, chosen once, here, by what the browser offers: the
// DevTools driver where chrome.debugger exists (Chromium), the WebExtension driver where it does
// not (Firefox). Nothing else in the extension asks which browser it is in; what a driver cannot
// do it answers with not_supported itself.

import { devtoolsDriver } from "./devtools/driver.js";
import { webExtensionDriver } from "./webext/driver.js";

export const driver = globalThis.chrome?.debugger ? devtoolsDriver : webExtensionDriver;

/** The driver as the broker hears of it in `connected`: its name and the actions it carries out. */
export const driverAbilities = () => ({ name: driver.name, actions: [...driver.actions] });

/** Let go of the tab (its client released it), after whatever action is running on it. */
export const releaseTab = (tabId) => driver.releaseTab(tabId);

/** Let go of the tabs last used by the sessions of the broker on `port` that `ended(sessionId)` picks. */
export const releaseSessions = (port, ended) => driver.releaseSessions(port, ended);
