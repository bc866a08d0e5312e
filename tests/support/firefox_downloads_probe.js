// Loaded beside background.js in a copy of the extension by tests/firefox/test_firefox_downloads.py: lets
// the test's extension page ask, through runtime.getBackgroundPage(), which downloads the
// background still keeps for a tab (the same module instance the built-in tools report from).
import { downloadsOf } from "./actions/downloads.js";

globalThis.browserMcpDownloadsOf = (tabId) => downloadsOf(tabId);
