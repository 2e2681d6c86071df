// Copies the front-end dependency into static/, where the server embeds it
// from: the embedded file is the package's own, byte for byte.
import { copyFileSync } from "node:fs";

copyFileSync("node_modules/htmx.org/dist/htmx.min.js", "static/htmx.min.js");
