// The WebExtension driver's members of the person's script library and page info
// (actions/person_scripts.js), a script run as this driver runs browser_evaluate's function
// (capture.js: the page's own Function, so a page whose Content Security Policy forbids eval refuses it).

import { evaluate } from "./capture.js";
import { scriptTools } from "../person_scripts.js";

export const { scripts, runScript, pageInfo } = scriptTools(evaluate);
