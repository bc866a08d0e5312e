// ESLint flat config for the extension's plain JavaScript, and the Node scripts the tests run it
// under (scripts/lint runs `npx eslint extension tests/js`).
// The service worker's modules and the popup are ES modules; the content scripts are classic scripts.
import js from "@eslint/js";
import prettier from "eslint-config-prettier";
import globals from "globals";

// Classic scripts the extension puts in pages (page_tools/), which cannot import.
const CONTENT_SCRIPTS = [
  "extension/page_tools/bridge.js",
  "extension/page_tools/bridge_chromium.js",
  "extension/page_tools/polyfill.js",
  "extension/page_tools/navigator_context.js",
];

export default [
  // Vendored releases, kept as they came (extension/actions/vendor/*/README.md).
  { ignores: ["extension/actions/vendor/**"] },
  js.configs.recommended,
  {
    files: ["extension/**/*.js"],
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: "module",
      globals: { ...globals.browser, ...globals.webextensions },
    },
  },
  {
    // Everything but the popup and the content scripts runs in the service worker.
    files: ["extension/**/*.js"],
    ignores: ["extension/person/popup.js", ...CONTENT_SCRIPTS],
    languageOptions: { globals: { ...globals.serviceworker, ...globals.webextensions } },
  },
  {
    files: CONTENT_SCRIPTS,
    languageOptions: { sourceType: "script" },
  },
  {
    files: ["tests/js/**/*.mjs"],
    languageOptions: { ecmaVersion: 2024, sourceType: "module", globals: globals.node },
  },
  prettier,
];
