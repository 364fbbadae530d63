#!/usr/bin/env bash
# CTest driver_* tests: aclnn-cpu-driver end to end.
# usage: driver_test.sh DRIVER WORKDIR CASE   (CASE: batch | roundtrip | bad_arguments)
set -uo pipefail
driver=$1 work=$2 case=$3
src=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }

# expect CODE PATTERN CMD...: CMD exits with CODE and its output (stdout + stderr, kept in $out)
# matches PATTERN.
out=""
expect() {
  local code=$1 pattern=$2
  shift 2
  local rc
  out=$("$@" 2>&1)
  rc=$?
  echo "\$ aclnn-cpu-driver ${*:2}"
  echo "$out" | tail -4
  [ "$rc" -eq "$code" ] || fail "exit code $rc, expected $code"
  grep -qE -- "$pattern" <<<"$out" || fail "output does not match: $pattern"
}

case $case in
  batch)
    # Every problem of the smoke list passes --check, and --perf prints its figures.
    expect 0 "== 18 problems: 18 passed, 0 failed" \
      "$driver" --batch "$src/driver/problems/smoke.txt" --check --perf --warmup 1 --reps 2
    [ "$(grep -c '  perf median' <<<"$out")" -eq 18 ] || fail "not one perf line per problem"
    [ "$(grep -c '^\[[0-9]*/18\]' <<<"$out")" -eq 18 ] || fail "not one progress line per problem"
    ! grep -q FAIL <<<"$out" || fail "a check failed"
    ;;
  roundtrip)
    # --dump, then --input of that directory dumps the same bytes (every operator).
    problems=(
      "--op=lsm_bwd --shape=12x37x5 --dim=1 --dtype=bf16 --out-dtype=f32 --layout=padded"
      "--op=lsm --shape=16x300 --dtype=f16"
      "--op=ce_grad --shape=16x100 --dtype=bf16 --weight --label-smoothing=0.1 --zloss=1e-4 --reduction=none"
      "--op=ce --shape=24x77 --weight --ignore-index=2 --zloss=1e-3 --target-dtype=s32"
    )
    i=0
    for p in "${problems[@]}"; do
      i=$((i + 1))
      # shellcheck disable=SC2086
      expect 0 "dumped to d$i" "$driver" $p --check --dump "d$i" --seed "$i"
      expect 0 "1 passed" "$driver" --input "d$i" --check --dump "e$i"
      n=0
      for f in "d$i"/*.npy; do
        cmp "$f" "e$i/$(basename "$f")" || fail "$f differs after --input"
        n=$((n + 1))
      done
      [ "$n" -ge 2 ] || fail "d$i holds only $n .npy files"
      grep -q '"status": 0' "e$i/problem.json" || fail "e$i/problem.json has no status 0"
      echo "  d$i -> e$i: $n .npy files identical"
    done
    # --input computes from the files, not from problem.json's seed: d2 with another seed's input
    # gives that seed's output.
    expect 0 "dumped to s9" "$driver" --op=lsm --shape=16x300 --dtype=f16 --seed 9 --dump s9
    cp -r d2 swapped && cp s9/self.npy swapped/self.npy
    expect 0 "dumped to t9" "$driver" --input swapped --check --dump t9
    cmp t9/out.npy s9/out.npy || fail "--input did not compute from the swapped self.npy"
    ! cmp -s t9/out.npy d2/out.npy || fail "--input ignored the swapped self.npy"
    # Another writer's header (format 2.0, no spaces, NumPy's key order varies) reads the same;
    # a truncated file is refused.
    python3 - s9/self.npy swapped/self.npy <<'PY'
import struct, sys
src = open(sys.argv[1], "rb").read()
hlen = struct.unpack("<H", src[8:10])[0]
header = b"{'shape':(16,300),'fortran_order':False,'descr':'<f2'}"
header += b" " * (-(12 + len(header) + 1) % 64) + b"\n"
open(sys.argv[2], "wb").write(b"\x93NUMPY\x02\x00" + struct.pack("<I", len(header)) + header + src[10 + hlen:])
PY
    expect 0 "dumped to u9" "$driver" --input swapped --check --dump u9
    cmp u9/out.npy s9/out.npy || fail "a version 2.0 header read differently"
    head -c 5000 s9/self.npy >swapped/self.npy
    expect 1 "self.npy holds fewer elements than its shape says" "$driver" --input swapped
    # --input checks what it reads: a tensor of another shape is refused by name.
    cp -r d2 bad && cp d1/out.npy bad/self.npy
    expect 1 "self.npy" "$driver" --input bad --check
    # A batch dumps each problem to its own numbered directory.
    printf '%s\n' "# two problems" "--op=lsm --shape=3x4" "--op=ce --shape=2x5" >two.txt
    expect 0 "2 passed" "$driver" --batch two.txt --dump many
    [ -f many/1/problem.json ] && [ -f many/2/problem.json ] || fail "batch dump directories"
    ;;
  bad_arguments)
    expect 2 "--op foo is not one of: ce, ce_fp32, ce_grad, ce_grad_logits, ce_lse" "$driver" --op foo
    expect 2 "--shape 4x: dims are non-negative integers" "$driver" --op lsm --shape 4x
    expect 2 "needs a 2-D --shape NxC, not 3x4x5" "$driver" --op ce --shape 3x4x5
    expect 2 "--reduction: .*mean" "$driver" --op ce --reduction avg
    expect 2 "no problem: give --op" "$driver" --check
    expect 2 "The following argument was not expected: --bogus" "$driver" --bogus
    expect 2 "Directory does not exist" "$driver" --input "$work/missing"
    printf '%s\n' "--op=lsm --shape=3x4" "--op=lsm --shape=3x" >bad.txt
    expect 2 "bad.txt:2: --shape 3x" "$driver" --batch bad.txt
    # Problems the library rejects fail the run (exit 1) with its message; outputs untouched.
    expect 1 "phase 1 returned 161002: .*(outputs untouched)" "$driver" --op lsm --shape 4x4 --dim 5
    expect 1 "--cpu-target NOSUCH is not available here" "$driver" --op lsm --cpu-target NOSUCH
    ;;
  soc)
    # --soc: the NPU's refusals, with the profile named and the outputs untouched
    # (docs/soc_profiles.md); the default accepts the same problems.
    b910=(--soc Ascend910B2 --op ce_grad --shape 64x16)
    expect 1 "161002: .*target has dtype INT32, which Ascend910B2 does not take" \
      "$driver" "${b910[@]}" --target-dtype s32
    expect 1 "161002: .*labelSmoothing 0.1 is not implemented on Ascend910B2.*untouched" \
      "$driver" "${b910[@]}" --label-smoothing 0.1
    expect 0 "1 passed" "$driver" --op ce_grad --shape 64x16 --target-dtype s32 --label-smoothing 0.1
    for soc in Ascend910B2 Ascend950PR; do
      for op in ce ce_grad; do
        expect 1 "561002: .*target has shape \\[7\\] but must be" \
          "$driver" --soc $soc --op $op --shape 64x16 --target-length 7
      done
    done
    expect 1 "161002: aclnnLogSoftmax: self has dtype BF16, which Ascend310P3 does not support" \
      "$driver" --soc Ascend310P3 --op lsm --shape 8x16 --dtype bf16
    expect 1 "561003: aclnnCrossEntropyLossGrad does not exist on Ascend910ProA" \
      "$driver" --soc Ascend910ProA --op ce_grad --shape 8x16
    expect 1 "100000: .*target\\[[0-9]+\\] = -100 is not a class.*negative ignoreIndex masks no row" \
      "$driver" --soc Ascend950PR --op ce_grad --shape 64x16
    expect 0 "1 passed" "$driver" --op ce_grad --shape 64x16
    expect 2 "ACLNN_CPU_SOC=\"Ascend999\" is not a known SoC; known:" \
      "$driver" --soc Ascend999 --op ce --shape 8x8
    expect 2 "--op log_softmax has no class-index tensor for --target-length" \
      "$driver" --op lsm --target-length 3
    ;;
  *) fail "unknown case $case" ;;
esac
echo "PASS: driver $case"
