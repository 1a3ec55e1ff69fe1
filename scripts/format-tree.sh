#!/usr/bin/env bash
# npm run format → the whole tree in Biome's format (biome.json), then Biome's safe lint fixes,
# then `npm run lint`'s check, which names whatever is left for a hand edit.
#
# Run once by hand over the merged tree before the commit that makes `.ci/run` call
# `npm run lint` land (docs/development/lint.md#the-one-time-pass); after that, whenever a
# change should be brought into form. It writes only files biome.json covers (src/, scripts/,
# test/, not node_modules or JSON) and only fixes Biome marks safe: no --unsafe.
set -euo pipefail
cd "$(dirname "$0")/.."
biome=node_modules/.bin/biome
"$biome" format --write
# A safe fix may leave other diagnostics; the check below lists them, so this one's status is not the verdict.
"$biome" lint --write || true
# The formatter runs again: a lint fix may leave a line the formatter would lay out otherwise.
"$biome" format --write
if ! "$biome" check --error-on-warnings; then
  echo "format-tree: formatted; the diagnostics above need a hand edit" >&2
  exit 1
fi
