// What this build of the extension tells the person to run or open. The Firefox build's manifest
// carries a gecko id (broker/firefox_extension.py writes it) and Chromium's has none: the build,
// not the browser's name, decides which native host manifest allows this extension, which folder
// loads it and where its pages are.

const FIREFOX_BUILD = Boolean(chrome.runtime.getManifest().browser_specific_settings?.gecko);

/** The command that lets the browser start the native host for this extension. */
export const NATIVE_HOST_COMMAND = FIREFOX_BUILD
  ? "browser-mcp install-native-host --browser firefox"
  : "browser-mcp install-native-host";

/** What a person does about an extension older than a broker needs. */
export const UPDATE_ADVICE = FIREFOX_BUILD
  ? "load the add-on again from the folder `browser-mcp extension path --browser firefox` prints, at" +
    " about:debugging (or update it from addons.mozilla.org)"
  : "load the extension again from the folder `browser-mcp extension path` prints (or update it from the store)" +
    " and reload it at chrome://extensions";

/** Where the person finds the extension's options page. */
export const OPTIONS_PLACE = FIREFOX_BUILD
  ? "about:addons → browser-mcp → Preferences"
  : "chrome://extensions → browser-mcp → Details → Extension options";
