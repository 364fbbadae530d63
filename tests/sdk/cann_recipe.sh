#!/usr/bin/env bash
# Builds and runs every program of examples/ against an installed SDK with one of CANN's two
# documented recipes, after `source <prefix>/set_env.sh`:
#   custom: ASCEND_CUSTOM_PATH, include + include/aclnn, four libraries
#   home:   ASCEND_HOME_PATH only, include + include/aclnnop, three libraries
# usage: cann_recipe.sh PREFIX EXAMPLES_DIR BUILD_DIR custom|home [TOOLCHAIN_FILE EMULATOR...]
# A cross build (an aarch64 SDK) passes the toolchain file the library was built with and the
# emulator that runs its programs (qemu-aarch64 -L ...).
set -euo pipefail
prefix=$1 examples=$2 build=$3 recipe=$4
toolchain=${5:-}
emulator=("${@:6}")
source "$prefix/set_env.sh"
[ "$recipe" = home ] && unset ASCEND_CUSTOM_PATH
rm -rf "$build"
cmake -S "$examples" -B "$build" ${toolchain:+"-DCMAKE_TOOLCHAIN_FILE=$toolchain"} >"$build.log" 2>&1 ||
  { cat "$build.log"; exit 1; }
cmake --build "$build" >>"$build.log" 2>&1 || { cat "$build.log"; exit 1; }
for exe in "$build"/bin/*; do
  "${emulator[@]}" "$exe" >/dev/null || { echo "$exe failed"; exit 1; }
  echo "ok: $(basename "$exe") ($recipe recipe)"
done
# The same binary under a SoC profile: aclrtGetSocName() names it, and the NPU's refusal of a
# label-smoothed gradient on the 910B-family comes back (docs/soc_profiles.md).
soc_out=$(ACLNN_CPU_SOC=Ascend910B2 "${emulator[@]}" "$build/bin/test_soc_name")
grep -q "aclrtGetSocName: Ascend910B2" <<<"$soc_out" && grep -q "ERROR 161002" <<<"$soc_out" ||
  { echo "test_soc_name under Ascend910B2 printed:"; echo "$soc_out"; exit 1; }
echo "ok: test_soc_name under ACLNN_CPU_SOC=Ascend910B2 ($recipe recipe)"
