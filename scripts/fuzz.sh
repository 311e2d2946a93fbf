#!/usr/bin/env bash
# Fuzzes the CLI's input parsing with AFL++ (docs/fuzzing.md).
# Usage: scripts/fuzz.sh TARGET MINUTES    TARGET = ini | flags | table | npy | all (one after another)
#   Builds the harnesses with afl-clang-fast in build-fuzz/, runs afl-fuzz on fuzz/corpus/TARGET
#   with the dictionary fuzz/dict/dpdyn.dict for MINUTES minutes, writes fuzz-out/TARGET/ and
#   prints the run's numbers. A previous fuzz-out/TARGET is moved aside (FUZZ_RESUME=1 resumes
#   it instead). Non-interactive: no tty needed. Environment: FUZZ_TIMEOUT_MS (per input, 1000),
#   AFL_NO_AFFINITY (1; set it to 0 to let afl-fuzz bind to a free core), FUZZ_ASAN=1 (harnesses
#   with ASan + UBSan in build-fuzz-asan/, output in fuzz-out/TARGET-asan: slower, but catches
#   out-of-bounds reads and writes that do not crash a plain build).
set -euo pipefail
cd "$(dirname "$0")/.."
usage() {
  echo "usage: scripts/fuzz.sh ini|flags|table|npy|all MINUTES" >&2
  exit 1
}
[ $# -eq 2 ] || usage
target=$1
minutes=$2
case $target in ini | flags | table | npy | all) ;; *) usage ;; esac
case $minutes in '' | *[!0-9]*) usage ;; esac
[ "$minutes" -ge 1 ] || usage

if ! command -v afl-fuzz >/dev/null || ! command -v afl-clang-fast >/dev/null; then
  echo "fuzz.sh: installing afl++" >&2
  sudo=
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq afl++
fi

targets=$target
[ "$target" = all ] && targets="ini flags table npy"

build=build-fuzz
suffix=
if [ "${FUZZ_ASAN:-0}" = 1 ]; then
  # afl-clang-fast adds the sanitizers (UBSan traps: a finding is a crash). No leak check at
  # every exit (it costs a third of the run): the ctest replays check the corpus for leaks.
  export AFL_USE_ASAN=1 AFL_USE_UBSAN=1
  export ASAN_OPTIONS=abort_on_error=1:symbolize=0:detect_leaks=0:allocator_may_return_null=1
  build=build-fuzz-asan
  suffix=-asan
fi
CC=afl-clang-fast cmake -S . -B "$build" -DDPD_FUZZ=ON -DDPD_BUILD_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
for t in $targets; do
  cmake --build "$build" -j"$(nproc)" --target "fuzz_$t" >/dev/null
done

export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1
export AFL_NO_AFFINITY=${AFL_NO_AFFINITY:-1}
# One thread per execution: the harness validates inputs, it computes nothing in parallel.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=passive
timeout_ms=${FUZZ_TIMEOUT_MS:-1000}

for t in $targets; do
  out=fuzz-out/$t$suffix
  input=(-i "fuzz/corpus/$t")
  if [ -d "$out" ]; then
    if [ "${FUZZ_RESUME:-0}" = 1 ]; then
      input=(-i -)
    else
      mv "$out" "$out.prev-$(date +%Y%m%d-%H%M%S)"
    fi
  fi
  mkdir -p fuzz-out
  echo "fuzz.sh: fuzzing $t for $minutes min (output in $out)"
  afl-fuzz -V $((minutes * 60)) "${input[@]}" -o "$out" -x fuzz/dict/dpdyn.dict \
    -t "$timeout_ms" -m none -- "$build/fuzz_$t" @@ </dev/null
  stats=$out/default/fuzzer_stats
  if [ ! -f "$stats" ]; then
    echo "fuzz.sh: $stats is missing" >&2
    exit 1
  fi
  echo "== $t: $stats"
  for key in run_time execs_done execs_per_sec corpus_count saved_crashes saved_hangs \
    bitmap_cvg stability; do
    awk -F' *: *' -v k="$key" '$1 == k { printf "%-14s %s\n", $1, $2 }' "$stats"
  done
  for kind in crashes hangs; do
    found=$(find "$out/default/$kind" -type f -name 'id:*' 2>/dev/null | sort)
    if [ -n "$found" ]; then
      echo "$kind (copy each into tests/cli/fuzz_regressions/$t/ once fixed):"
      printf '  %s\n' $found
    fi
  done
done
