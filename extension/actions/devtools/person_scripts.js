// The DevTools driver's members of the person's script library and page info (actions/person_scripts.js),
// a script run as this driver runs browser_evaluate's function (evaluate.js).

import { evaluate } from "./evaluate.js";
import { scriptTools } from "../person_scripts.js";

export const { scripts, runScript, pageInfo } = scriptTools(evaluate);
