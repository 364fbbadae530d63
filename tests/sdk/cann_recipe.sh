#!/usr/bin/env bash
# Builds and runs every program of examples/ against an installed SDK with one of CANN's two
# documented recipes, after `source <prefix>/set_env.sh`:
#   custom: ASCEND_CUSTOM_PATH, include + include/aclnn, four libraries
#   home:   ASCEND_HOME_PATH only, include + include/aclnnop, three libraries
# usage: cann_recipe.sh PREFIX EXAMPLES_DIR BUILD_DIR custom|home
set -euo pipefail
prefix=$1 examples=$2 build=$3 recipe=$4
source "$prefix/set_env.sh"
[ "$recipe" = home ] && unset ASCEND_CUSTOM_PATH
rm -rf "$build"
cmake -S "$examples" -B "$build" >"$build.log" 2>&1 || { cat "$build.log"; exit 1; }
cmake --build "$build" >>"$build.log" 2>&1 || { cat "$build.log"; exit 1; }
for exe in "$build"/bin/*; do
  "$exe" >/dev/null || { echo "$exe failed"; exit 1; }
  echo "ok: $(basename "$exe") ($recipe recipe)"
done
