// OpenCode end to end (opencode-ai 1.18.33, its platform binary from the npm registry): the
// plugin-host suite (test/e2e/plugin-host.ts) on OpenCode's directories and switches.
import { HOST_BINS } from "../../e2e/host-bins.ts";
import { pluginHostSuite } from "../../e2e/plugin-host.ts";

pluginHostSuite({
  name: "opencode",
  bin: HOST_BINS.opencode,
  configFile: "opencode.json",
  pluginPackage: ["@opencode-ai/plugin", "1.18.33"],
  env: { OPENCODE_DISABLE_MODELS_FETCH: "1" },
});
