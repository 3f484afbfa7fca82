#!/usr/bin/env bash
# The proof stage. First it proves with Why3 (Z3, CVC4) the machine facts that
# test/prove/ticks.c states as axioms, as lemmas of the same names in test/prove/bits.mlw
# on 64-bit words. Then it proves with Frama-C's WP (provers: Qed, Z3, CVC4) the contracts
# of ticks.c on the functions test/prove/extract.py copies verbatim from hwtimer.h, in runs
# (RUNS below, on ticks.c's PROVE_HALVES, PROVE_DIVISION, PROVE_SHIFTS, PROVE_WHERE,
# PROVE_GRID and PROVE_RECIPROCAL: each with only the lemmas it needs), and prints what
# stays assumed. Then it tests what is not proved: that the multiply-high in 32-bit halves
# (HWTIMER__MULHI_HALVES, the form the proof reads and proves hwtimer__div_tick with)
# equals the __int128 product's high half that GCC and Clang builds use, and
# hwtimer__msb64 (__builtin_clzll) against a loop (test/prove/halves.c). Prints
# "prove: P/T goals proved" (Why3's and WP's); fails unless every goal is.
#   test/prove/run.sh            the proof
#   test/prove/run.sh --mutants  each mutant (extract.py --list-mutants) must fail it
# PROVE_TIMEOUT: a prover's seconds per goal, in WP and Why3 (20; the slowest goal takes
# under 4 here).
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
# and each lemma proved alone with what it needs. PROVE_GRID's: hwtimer__leeway_grid,
# hwtimer__set_leeway_memo and hwtimer__slot_start, each alone with the facts it needs,
# and the lemmas in groups, each with the facts its proofs need (lemma_round leaves out
# shr, with which the provers lose their way in div_pow2_high; lemma_collected ends with
# collected: a node filed in a slot is reached at or before its tick). The grid's run
# leaves out -warn-unsigned-overflow: its rounding e + mask may wrap, on purpose (the test
# up < e catches it), and the contract says what it returns then.
# The reciprocal's (PROVE_RECIPROCAL):
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
  "grid|-DPROVE_WHERE -DWHERE_ONLY -DPROVE_GRID -DA_POW2 -DA_WRAP -DA_AND_NOT -DL_FLOOR|-wp-fct hwtimer__leeway_grid"
  "memo|-DPROVE_WHERE -DWHERE_ONLY -DPROVE_GRID -DA_DEF -DA_POW2 -DA_SHL -DL_MSB -DL_SCALE|-warn-unsigned-overflow -wp-fct hwtimer__set_leeway_memo"
  "slots|-DPROVE_WHERE -DWHERE_ONLY -DPROVE_GRID -DA_POW2 -DA_SHL -DA_SHR -DA_OR -DL_FLOOR -DL_DIGIT_BELOW|-warn-unsigned-overflow -wp-fct hwtimer__slot_start"
  "lemma_grid|-DPROVE_WHERE -DWHERE_LEMMAS -DWHERE_ONLY -DPROVE_GRID -DA_ADD -DA_POW2 -DL_FLOOR -DL_SCALE -DL_TIME -DL_DIGIT_BELOW|-wp-prop=floor_mul,scale,leeway_time,digit_below"
  "lemma_divp|-DPROVE_WHERE -DWHERE_LEMMAS -DWHERE_ONLY -DPROVE_GRID -DA_SHR -DA_POW2 -DA_ADD -DL_DIV_POW2|-wp-prop=div_le,div_pow2_low,div_small,div_below,pow2_past,div_pow2"
  "lemma_round|-DPROVE_WHERE -DWHERE_LEMMAS -DWHERE_ONLY -DPROVE_GRID -DA_POW2 -DA_ADD -DL_DIV_POW2 -DL_ROUND_DIGIT|-wp-prop=div_pow2_high,mod_split,round_digit"
  "lemma_levels|-DPROVE_WHERE -DWHERE_LEMMAS -DWHERE_ONLY -DPROVE_GRID -DA_XOR_SHR -DA_POW2 -DL_COLLECTED|-wp-prop=level_digits"
  "lemma_collected|-DPROVE_WHERE -DWHERE_LEMMAS -DWHERE_ONLY -DPROVE_GRID -DA_POW2 -DA_DEF -DL_FLOOR -DL_ROUND_DIGIT -DL_FLOOR_LT -DL_COLLECTED|-wp-prop=floor_lt,level_bounds,floor_same,slot_first_def,slot_first_tick,collected_at,collected"
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

# The machine facts WP assumes: every `axiom NAME` of ticks.c (the Bits axiomatic's and
# digit; ticks.c keeps the word for them) must be a lemma of the same name in
# test/prove/bits.mlw, so that one added later cannot go unproved, and be quoted there as
# it reads here, so that the two cannot drift apart unseen: a wrong axiom would let WP
# prove anything, and the provers only see the lemma.
python3 test/prove/extract.py --axioms test/prove/ticks.c test/prove/bits.mlw || exit 1

# bits.mlw's modules by prover (see there why): Z3 on its bit-vectors and integers, CVC4 on
# integers, Z3 on Why3's axioms of words. Every module of bits.mlw must be in one.
BITS_RUNS=(
  "z3|Native NativeMore Division DivFactsW Products"
  "cvc4|DivFacts"
  "z3-nobv|Pow2 Pow2Add Pow2Splits Msb Mask Facts NotMask More XorShr"
)
listed=$(for r in "${BITS_RUNS[@]}"; do echo "${r#*|}"; done | xargs -n1 | sort)
in_file=$(sed -n 's/^module \([A-Za-z0-9_]*\).*/\1/p' test/prove/bits.mlw | sort)
[ "$listed" = "$in_file" ] || { echo "FAIL: run.sh's BITS_RUNS and bits.mlw's modules differ:" \
  "$(diff <(echo "$listed") <(echo "$in_file") | sed -n 's/^[<>] //p' | xargs)"; exit 1; }

# why3_bits: bits.mlw's goals, "proved total"; a goal is proved only if its prover says Valid.
why3_bits() {
  local log="$out/bits.log" r p t m
  : >"$log"
  for r in "${BITS_RUNS[@]}"; do
    set --
    for m in ${r#*|}; do set -- "$@" -T "$m"; done
    # why3 exits 2 when a goal is not proved (counted below), another non-zero on an error
    why3 prove -P "${r%%|*}" -t "$timeout" -a split_vc test/prove/bits.mlw "$@" >>"$log" 2>&1
    case $? in 0) ;; 2) echo "why3: not all proved: ${r%%|*}" >>"$log" ;;
      *) echo "why3 failed: ${r%%|*}" >>"$log" ;; esac
  done
  p=$(grep -c '^Prover result is: Valid' "$log")
  t=$(grep -c '^Prover result is: ' "$log")
  # a run that reports failure has a goal not proved, however its lines read
  grep -q '^why3: not all proved' "$log" && [ "$p" = "$t" ] && t=$((t + 1))
  if grep -q '^why3 failed' "$log" || [ "$t" = 0 ]; then
    { echo "FAIL: why3 did not run on test/prove/bits.mlw"; grep -v '^Prover result\|^Goal\|^Sub-goal\|^File\|^$' "$log" | tail -20; } >&2
    echo "0 1"; return
  fi
  echo "$p $t"
}

command -v frama-c >/dev/null || { echo "FAIL: no frama-c (.ci/deps installs frama-c-base)"; exit 1; }
command -v why3 >/dev/null || { echo "FAIL: no why3 (it proves test/prove/bits.mlw; .ci/deps installs frama-c-base, which brings it)"; exit 1; }
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
read -r bp bt < <(why3_bits)
awk '/^File /{f=$0} /Goal /{g=$0} /^Prover result is: / && !/Valid/{print "FAIL: " f " " g " " $0}' "$out/bits.log"
echo "prove: Why3: $bp/$bt bit facts proved in $((SECONDS - start)) s (test/prove/bits.mlw: the lemma of each axiom of ticks.c)"
start=$SECONDS
read -r proved total < <(prove "$out/proof.c")
for log in $(logs); do
  grep -A3 '^\[wp\] \[\(Failed\|Unknown\|Timeout\)\]' "$log" | sed 's/^/FAIL: /'
done
echo "prove: WP: $proved/$total goals proved in $((SECONDS - start)) s"
proved=$((proved + bp)); total=$((total + bt))
# What the wheel's goals rest on without a proof (ticks.c's axioms are bits.mlw's lemmas)
echo "prove: assumed: WP's integer >>, <<, &, |, ^ of values in [0, 2^64) are the C operations on" \
  "64-bit words as Why3's bv theory models them (the link from ticks.c's axioms to" \
  "bits.mlw's lemmas); __builtin_clzll(x) == 63 - msb(x) (the compiler's documented" \
  "meaning; tested by halves.c); hwtimer__leeway's result below UMAX (an invariant of the" \
  "node that hwtimer_timeout_set_leeway keeps)"

# The multiply-high in halves and the __int128 one: equal (not proved), div_tick with the
# halves is n / tick_ns (proved; tested here as well), and hwtimer__msb64 (__builtin_clzll,
# as the proof assumes it) is the highest set bit.
cc -O2 -o "$out/halves" test/prove/halves.c || { echo "FAIL: test/prove/halves.c did not build"; exit 1; }
"$out/halves" || { echo "FAIL: test/prove/halves.c"; exit 1; }
[ "$proved" -eq "$total" ] || { echo "FAIL: $((total - proved)) goals not proved"; exit 1; }
echo "prove: $proved/$total goals proved, halves test passed"
