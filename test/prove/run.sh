#!/usr/bin/env bash
# The proof stage: proves with Frama-C's WP (provers: Qed, Z3, CVC4) the contracts of
# test/prove/ticks.c on the functions test/prove/extract.py copies verbatim from hwtimer.h,
# in runs (RUNS below, on ticks.c's PROVE_HALVES, PROVE_DIVISION, PROVE_SHIFTS,
# PROVE_WHERE and PROVE_RECIPROCAL: each with only the lemmas it needs), and prints the
# facts assumed. Then tests what is not proved: that the multiply-high in 32-bit halves
# (HWTIMER__MULHI_HALVES, the form the proof reads and proves hwtimer__div_tick with)
# equals the __int128 product's high half that GCC and Clang builds use; with it,
# div_tick against n / tick_ns (test/prove/halves.c).
# Prints "prove: P/T goals proved"; fails unless every goal is.
#   test/prove/run.sh            the proof
#   test/prove/run.sh --mutants  each mutant (extract.py --list-mutants) must fail it
# PROVE_TIMEOUT: a prover's seconds per goal (20; the slowest goal takes under 4 here).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit
out=build/prove
mkdir -p "$out"
timeout=${PROVE_TIMEOUT:-20}

# wp RUN_NAME FILE CPP_FLAGS [options]: one WP run (lemmas and functions), "proved total".
wp() {
  local name=$1 file=$2 cpp=$3
  shift 3
  frama-c -cpp-extra-args="$cpp" -wp -wp-rte \
    -wp-prover qed,z3,cvc4 -wp-timeout "$timeout" -wp-par 2 -wp-cache none \
    "$@" "$file" >"$out/$name.log" 2>&1
  if ! grep -qE '^\[wp\] Proved goals: ' "$out/$name.log"; then
    { echo "FAIL: $name: frama-c did not run"; tail -20 "$out/$name.log"; } >&2
    echo "0 1"
    return
  fi
  sed -n 's/^\[wp\] Proved goals: *\([0-9]*\) \/ \([0-9]*\)$/\1 \2/p' "$out/$name.log"
}

# The runs: NAME|CPP_FLAGS|WP options (see ticks.c). The wheel's (PROVE_WHERE): its
# functions with every lemma, where's postcondition `where` alone with the two it needs,
# and each lemma proved alone with what it needs. The reciprocal's (PROVE_RECIPROCAL):
# hwtimer__mulhi64's value (run mulhi, with its lemma mulhi_halves; the halves run leaves
# it out: with that lemma in context the provers lose their way on the overflow goals)
# and div_tick's (run reciprocal, on lemma recip_div), and the lemmas these rest on, each
# in a run with only the lemmas it rests on (RECIP_LEMMAS).
RUNS=(
  "halves|-DPROVE_HALVES|-warn-unsigned-overflow -wp-prop=-mulhi_value"
  "division|-DPROVE_DIVISION -U__SIZEOF_INT128__|-warn-unsigned-overflow"
  "shifts|-DPROVE_SHIFTS|"
  "where|-DPROVE_WHERE|-warn-unsigned-overflow -wp-prop=-where"
  "where_post|-DPROVE_WHERE -DWHERE_ONLY -DL_DIGIT -DL_XOR|-warn-unsigned-overflow -wp-fct hwtimer__wheel_where -wp-prop=where"
  "lemma_msb|-DPROVE_WHERE -DWHERE_LEMMAS -DWHERE_ONLY -DA_DEF -DA_POW2 -DL_MSB|-wp-prop=msb_lt,msb_lt64"
  "lemma_arith|-DPROVE_WHERE -DWHERE_LEMMAS -DWHERE_ONLY -DL_ARITH|-wp-prop=div_lt,mul_le"
  "lemma_xor|-DPROVE_WHERE -DWHERE_LEMMAS -DWHERE_ONLY -DA_XOR -DA_POW2 -DL_XOR|-wp-prop=xor_u64"
  "lemma_room|-DPROVE_WHERE -DWHERE_LEMMAS -DWHERE_ONLY -DL_ARITH -DL_ROOM|-wp-prop=room"
  "lemma_level|-DPROVE_WHERE -DWHERE_LEMMAS -DWHERE_ONLY -DA_XOR -DA_POW2 -DL_MSB -DL_ARITH -DL_XOR -DL_LEVEL|-wp-prop=level"
  "mulhi|-DPROVE_HALVES -DRECIP_LEMMAS -DR_CARRY -DR_RING -DR_MULHI|-warn-unsigned-overflow -wp-prop=mulhi_value,mulhi_halves"
  "lemma_mulhi_carry|-DPROVE_RECIPROCAL -DRECIP_LEMMAS -DR_CARRY|"
  "lemma_mulhi_ring|-DPROVE_RECIPROCAL -DRECIP_LEMMAS -DR_RING|"
  "lemma_recip_div|-DPROVE_RECIPROCAL -DRECIP_LEMMAS -DR_INV -DR_STEPS -DR_Q -DR_DIV|-wp-prop=recip_q,recip_div"
  "reciprocal|-DPROVE_RECIPROCAL -DHWTIMER__MULHI_HALVES -DR_DIV|-warn-unsigned-overflow"
  "lemma_recip_high_t|-DPROVE_RECIPROCAL -DRECIP_LEMMAS -DR_HIGH_T|"
  "lemma_recip_products|-DPROVE_RECIPROCAL -DRECIP_LEMMAS -DR_LOW_T -DR_LOW_N -DR_HIGH_N|"
  "lemma_recip_parts|-DPROVE_RECIPROCAL -DRECIP_LEMMAS -DR_PARTS -DR_INV|"
  "lemma_recip_steps|-DPROVE_RECIPROCAL -DRECIP_LEMMAS -DR_LOW_T -DR_LOW_N -DR_HIGH_T -DR_HIGH_N -DR_PARTS -DR_STEPS|-wp-prop=recip_low,recip_high,recip_near"
)

# prove FILE: the runs, two at a time; prints "proved total".
# (unsigned arithmetic proved never to wrap, but in hwtimer__shl: bits it shifts out are
# its callers' to rule out, only its shift is checked)
prove() {
  local file=$1 p=0 t=0 a b spec name cpp opts i=0
  for spec in "${RUNS[@]}"; do
    IFS='|' read -r name cpp opts <<<"$spec"
    # shellcheck disable=SC2086
    wp "$name" "$file" "$cpp" $opts >"$out/$name.count" &
    i=$((i + 1)); [ $((i % 2)) = 0 ] && wait
  done
  wait
  for spec in "${RUNS[@]}"; do
    read -r a b <"$out/${spec%%|*}.count"
    p=$((p + ${a:-0})); t=$((t + ${b:-1}))
  done
  echo "$p $t"
}
logs() { local spec; for spec in "${RUNS[@]}"; do echo "$out/${spec%%|*}.log"; done; }

command -v frama-c >/dev/null || { echo "FAIL: no frama-c (.ci/deps installs frama-c-base)"; exit 1; }
# Frama-C finds the provers through Why3's configuration: made once, on a fresh machine
grep -qs '^name = "Z3"' "$HOME/.why3.conf" && grep -qs '^name = "CVC4"' "$HOME/.why3.conf" ||
  why3 config detect >/dev/null 2>&1
python3 test/prove/extract.py hwtimer.h test/prove/ticks.c "$out/proof.c" || exit 1

if [ "${1:-}" = --mutants ]; then
  rc=0
  while IFS= read -r m; do
    python3 test/prove/extract.py hwtimer.h test/prove/ticks.c "$out/mutant.c" --mutant "$m" || { rc=1; continue; }
    read -r p t < <(prove "$out/mutant.c")
    failed=$(logs | xargs cat | sed -n 's/^\[wp\] \[Failed\] Goal typed_//p' | xargs)
    if [ "$p" -lt "$t" ]; then echo "killed: $m ($p/$t proved; not: $failed)"
    else echo "FAIL: mutant survived: $m ($p/$t proved)"; rc=1; fi
  done < <(python3 test/prove/extract.py --list-mutants)
  exit "$rc"
fi

start=$SECONDS
read -r proved total < <(prove "$out/proof.c")
for log in $(logs); do
  grep -A3 '^\[wp\] \[\(Failed\|Unknown\|Timeout\)\]' "$log" | sed 's/^/FAIL: /'
done
echo "prove: WP: $proved/$total goals proved in $((SECONDS - start)) s"
# What the wheel's goals rest on without a proof (ticks.c's Bits and Where axiomatics)
echo "prove: assumed: __builtin_clzll(x) == 63 - msb(x); bit facts pow2_64, pow2_le, shr," \
  "and_le, xor64, xor_below; lemma digit (wheel_where's where, range, sum overflow)"

# The multiply-high in halves and the __int128 one: equal (not proved), and div_tick with
# the halves is n / tick_ns (proved; tested here as well).
cc -O2 -o "$out/halves" test/prove/halves.c || { echo "FAIL: test/prove/halves.c did not build"; exit 1; }
"$out/halves" || { echo "FAIL: test/prove/halves.c"; exit 1; }
[ "$proved" -eq "$total" ] || { echo "FAIL: $((total - proved)) goals not proved"; exit 1; }
echo "prove: $proved/$total goals proved, halves test passed"
