#!/usr/bin/env bash
# Malformed-input catalogue (with test_errors.sh): every command, both models, every numeric key.
#
#  1. Numeric edge values of every KEY_INT / KEY_REAL key (src/cli/params.c), each in a context
#     where the key is in effect. The oracle needs no per-key range table:
#       nan, 1e400, 0x1p-2   exit 1, one stderr line naming 'KEY', no output directory;
#       inf                  the same, except for the keys that document inf (c, rho, clip): there
#                            exit 0 or a one-line exit-1 error naming a key;
#       ' 7 ', 007           exactly like 7, and -0 exactly like 0: the same exit status and, on
#                            success, the same summary.json (but "wall_seconds", "out") and
#                            trajectory.tsv (but "# out = ").
#  2. The rows of the input-hardening issue, one case each.
#  3. Other malformed input of every command: the command line, --out, INI files, data files.
#
# Every case: no crash (exit >= 128) or time-out, exit 1 with exactly one stderr line, nothing at
# --out (nor a staging directory beside it) unless exit 0, and an exit-0 summary.json that parses
# as strict JSON without NaN. Prints "ok NAME", "FAIL NAME: why" or, for a known defect that is
# tolerated until src/ is fixed (the DEFECT switches below), "DEFECT NAME: what"; single cases
# that would fail on a known defect are kept, commented out, on "# DEFECT:" lines.
# usage: test_catalogue.sh DPDYN_BINARY SOURCE_DIR   (DPD_CATALOGUE_JOBS: parallel edge jobs, 2)
set -u
dpdyn=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/o" "$work/f" "$work/cwd" "$work/s"
# Relative --out values (., .., the default ./dpdyn-out) land in a scratch directory.
cd "$work/cwd" || exit 1
# The edge-value loops run in up to $jobs background jobs beside sections 2 and 3.
jobs=${DPD_CATALOGUE_JOBS:-2}

# Strictness switches of the edge-value oracle (both defects found by this catalogue are fixed;
# 0 would tolerate them again, printing DEFECT lines counted apart from the passes):
# numeric values are recorded in summary.json "params" and the data-file headers as the value in
# effect (--zeta=' 7 ' gives "zeta": 7, --seeds=007 gives "# seeds = 7", --zeta=-0 gives 0) ...
strict_echo=1
# ... and integer keys take -0 as 0.
int_minus_zero=1

passes=0
fails=0
defects=0
scratch=$work/s
: >"$work/json.list"
: >"$work/same.list"

ok() {
  echo "ok   $1"
  passes=$((passes + 1))
}
fail() {
  echo "FAIL $1: $2"
  fails=$((fails + 1))
}
defect() {
  echo "DEFECT $1: $2"
  defects=$((defects + 1))
}
stderr_text() { tr -d '\0' <"$scratch/stderr" | head -c 600 | tr '\n' '|'; }

# A run that spins is stopped by its CPU limit (SIGXCPU: exit >= 128, a failure); the cases that
# read endless files also run under `timeout 10` (TIMEOUT set).
ulimit -t 120

# run ARGS... : dpdyn; sets rc, errlines (the stderr lines, a last one without '\n' included) and
# nlines. No fork beside dpdyn itself: ~600 runs on two cores.
run() {
  if [ -n "${TIMEOUT:-}" ]; then
    timeout "$TIMEOUT" "$dpdyn" "$@" >"$scratch/stdout" 2>"$scratch/stderr"
  else
    "$dpdyn" "$@" >"$scratch/stdout" 2>"$scratch/stderr"
  fi
  rc=$?
  mapfile -t errlines <"$scratch/stderr"
  nlines=${#errlines[@]}
}

# json_check NAME DIR [PYTHON_EXPR] : summary.json of DIR is checked at the end (one python run):
# strict JSON, no NaN, and PYTHON_EXPR (over the parsed object j) true.
json_check() {
  printf '%s\t%s\t%s\n' "$1" "$2/summary.json" "${3:-True}" >>"$work/json.list"
}

# verdict NAME WANT PATTERN OUT : checks the last run against the expectation.
#   WANT 0: summary.json in OUT (when the command writes one), PATTERN (if any) a python
#           expression over its object j;
#   WANT 1, 2, 3: one stderr line matching the extended regex PATTERN, nothing at OUT.
verdict() {
  local name=$1 want=$2 pattern=$3 out=$4
  local parent=${out%/*} base=${out##*/}
  if [ "$rc" -ge 124 ]; then
    fail "$name" "crash or time-out: exit $rc; stderr: $(stderr_text)"
  elif [ "$rc" -ne "$want" ]; then
    fail "$name" "exit $rc (want $want); stderr: $(stderr_text)"
  elif [ "$want" -ne 0 ] && [ "$nlines" -ne 1 ]; then
    fail "$name" "$nlines stderr lines (want 1): $(stderr_text)"
  elif [ "$want" -ne 0 ] && ! [[ ${errlines[0]} =~ $pattern ]]; then
    fail "$name" "message does not match /$pattern/: $(stderr_text)"
  elif [ "$want" -ne 0 ] && [ -e "$out" ]; then
    fail "$name" "exit $rc but '$out' was created"
  elif compgen -G "$parent/.$base.dpdyn-*" >/dev/null; then
    fail "$name" "a staging directory was left beside '$out'"
  elif [ "$want" -eq 0 ] && [[ "${errlines[*]:-}" =~ runtime\ error|Sanitizer ]]; then
    fail "$name" "sanitizer report: $(stderr_text)"
  elif [ "$want" -eq 0 ] && [ ! -e "$out/summary.json" ] && [ -n "$pattern" ]; then
    fail "$name" "no summary.json in '$out' to check $pattern"
  else
    if [ "$want" -eq 0 ] && [ -e "$out/summary.json" ]; then
      json_check "$name" "$out" "$pattern"
    fi
    if [ "$want" -ne 0 ]; then
      ok "$name: ${errlines[0]:0:160}"
    else
      ok "$name"
    fi
  fi
}

# tcase NAME WANT PATTERN -- ARGS... : one case (named tcase: `case` is a bash keyword). Adds
# --out=${OUT:-$work/o/NAME}; with NOOUT set it adds none (plot, cases about --out itself, a flag
# that must stay last) and checks the default ./dpdyn-out (or OUT) instead.
tcase() {
  local name=$1 want=$2 pattern=$3 out
  shift 3
  if [ "${1:-}" = "--" ]; then
    shift
  fi
  if [ -n "${NOOUT:-}" ]; then
    out=${OUT:-$work/cwd/dpdyn-out}
    run "$@"
  else
    out=${OUT:-$work/o/$name}
    run "$@" --out="$out"
  fi
  verdict "$name" "$want" "$pattern" "$out"
}

# same_text A B : summary.json and trajectory.tsv of the two output directories are the same
# text but for "wall_seconds", "out" and "# out = " (the differences in $scratch/diff).
same_text() {
  local a=$1 b=$2
  [ -e "$a/summary.json" ] && [ -e "$b/summary.json" ] || return 1
  diff <(grep -vE '^[[:space:]]*"(wall_seconds|out)":' "$a/summary.json") \
    <(grep -vE '^[[:space:]]*"(wall_seconds|out)":' "$b/summary.json") >"$scratch/diff" || return 1
  if [ -e "$a/trajectory.tsv" ] || [ -e "$b/trajectory.tsv" ]; then
    diff <(grep -v '^# out = ' "$a/trajectory.tsv" 2>&1) \
      <(grep -v '^# out = ' "$b/trajectory.tsv" 2>&1) >"$scratch/diff" || return 1
  fi
  return 0
}

# edge KEY INF_OK CONTEXT ARGS... : the seven edge values of KEY on top of the base ARGS
# (ARGS valid, KEY in effect). INF_OK = 1 for the keys whose documented range includes inf.
edge() {
  local key=$1 inf_ok=$2 ctx=$3
  shift 3
  local base=("$@") v label name out ref rc_ref
  # nan, 1e400, 0x1p-2 (and inf for most keys): always an input error naming the key.
  for v in nan 1e400 0x1p-2 inf; do
    label=$v
    [ "$v" = 1e400 ] && label=e400
    [ "$v" = 0x1p-2 ] && label=hex
    name="$ctx-$key-$label"
    out="$work/o/$name"
    run "${base[@]}" "--$key=$v" --out="$out"
    if [ "$v" = inf ] && [ "$inf_ok" = 1 ]; then
      if [ "$rc" -eq 0 ]; then
        verdict "$name" 0 "" "$out"
      else
        verdict "$name" 1 "'[a-z_0-9]+'" "$out"
      fi
    else
      verdict "$name" 1 "'$key'" "$out"
    fi
  done
  # ' 7 ' and 007 like 7; -0 like 0.
  for ref in 7 0; do
    out="$work/o/$ctx-$key-ref$ref"
    run "${base[@]}" "--$key=$ref" --out="$out"
    rc_ref=$rc
    if [ "$rc" -ge 124 ] || { [ "$rc" -ne 0 ] && [ "$nlines" -ne 1 ]; }; then
      fail "$ctx-$key-ref$ref" "reference run --$key=$ref: exit $rc, stderr: $(stderr_text)"
    fi
    if [ "$ref" = 7 ]; then
      variant "$ctx-$key-sp7" "$key" " 7 " 7 "$rc_ref" "${base[@]}"
      variant "$ctx-$key-007" "$key" 007 7 "$rc_ref" "${base[@]}"
    else
      variant "$ctx-$key-m0" "$key" -0 0 "$rc_ref" "${base[@]}"
    fi
  done
}

# variant NAME KEY VALUE REF RC_REF ARGS... : --KEY=VALUE behaves like --KEY=REF, which exited
# RC_REF with its output in $work/o/CTX-KEY-refREF.
variant() {
  local name=$1 key=$2 v=$3 ref=$4 rc_ref=$5
  shift 5
  local out="$work/o/$name" refout="$work/o/${name%-*}-ref$ref"
  run "$@" "--$key=$v" --out="$out"
  if [ "$rc" -ge 124 ]; then
    fail "$name" "crash or time-out: exit $rc; stderr: $(stderr_text)"
  elif [ "$rc" -ne "$rc_ref" ]; then
    if [ "$int_minus_zero" = 0 ] && [ "$v" = -0 ] && [ "$rc" -eq 1 ] && [ "$nlines" -eq 1 ] &&
      [[ ${errlines[0]} == *"'$key': '-0'"* ]]; then
      defect "$name" "exit 1 but --$key=0 exits 0: $(stderr_text)"
    else
      fail "$name" "exit $rc but --$key=$ref exits $rc_ref; stderr: $(stderr_text)"
    fi
  elif [ "$rc" -eq 1 ]; then
    verdict "$name" 1 "'[a-z_0-9]+'" "$out"
  elif [ "$rc" -ne 0 ]; then
    verdict "$name" "$rc" "." "$out"
  elif same_text "$refout" "$out"; then
    verdict "$name" 0 "" "$out"
  elif [ "$strict_echo" = 0 ]; then
    # The text differs: the numbers must not (checked at the end, where a difference fails).
    printf '%s\t%s\t%s\n' "$name" "$refout" "$out" >>"$work/same.list"
    json_check "$name" "$out"
    defect "$name" "output text differs from --$key=$ref: $(grep '^[<>]' "$scratch/diff" | head -c 200 | tr '\n' '|')"
  else
    fail "$name" "output differs from --$key=$ref: $(grep '^[<>]' "$scratch/diff" | head -c 300 | tr '\n' '|')"
  fi
}

# The edge runs: "KEY INF_OK CONTEXT ARGS..." per line, run in background jobs of their own
# scratch directory and log (merged in order at the end).
edges=()
edge_spec() { edges+=("$(printf '%q ' "$@")"); }
run_edges() {
  local i=0 spec
  for spec in "${edges[@]}"; do
    i=$((i + 1))
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
      wait -n
    done
    (
      # shellcheck disable=SC2030 # each job has a scratch directory of its own
      scratch=$work/s/edge$i
      mkdir -p "$scratch"
      eval "edge $spec"
    ) >"$work/s/edge$i.log" 2>&1 &
  done
  wait
}

# ---------------------------------------------------------------------------------------------
# 1. Numeric edge values of every numeric key.
# Base arguments: only keys that the command uses (a flag without effect adds a note to stderr).
Lo=(--d=5 --n=20 --grid=3)
L=("${Lo[@]}" --seeds=2)
R=(--model=rf --d=5 --n=20 --p=30 --n_test=10 --steps=5 --seeds=2 --grid=3)
T=(tune "${L[@]}" --rho=1 --tune=c --heatmap=0 --confirm_seeds=0 --plot=0)

edge_spec d 0 lin ode "${Lo[@]}"
edge_spec n 0 lin ode "${Lo[@]}"
edge_spec gamma 0 lin ode --d=5 --grid=3
edge_spec zeta 0 lin simulate "${L[@]}"
edge_spec theta_norm 0 lin ode "${Lo[@]}"
edge_spec c 1 lin simulate "${L[@]}" --rho=1
edge_spec rho 1 lin simulate "${L[@]}" --c=1
edge_spec epsilon 0 lin account "${Lo[@]}" --c=1 --delta=1e-3
edge_spec delta 0 lin account "${Lo[@]}" --c=1 --rho=1
edge_spec eta0 0 lin ode "${Lo[@]}"
edge_spec a 0 lin ode "${Lo[@]}" --schedule=hyperbolic
edge_spec c1 0 lin ode "${Lo[@]}" --schedule=optimal --c=1 --rho=1
edge_spec c2 0 lin ode "${Lo[@]}" --schedule=optimal --c=1 --rho=1
edge_spec c3 0 lin ode "${Lo[@]}" --schedule=optimal --c=1 --rho=1
edge_spec factor 0 lin ode "${Lo[@]}" --schedule=step
edge_spec drops 0 lin ode "${Lo[@]}" --schedule=step
edge_spec eta_min 0 lin ode "${Lo[@]}" --schedule=cosine
edge_spec dt 0 lin sde "${L[@]}"
edge_spec sde 0 lin compare "${L[@]}" --plot=0
edge_spec seeds 0 lin simulate "${L[@]}"
edge_spec seed 0 lin simulate "${L[@]}"
edge_spec threads 0 lin simulate "${L[@]}"
edge_spec grid 0 lin ode "${Lo[@]}"
edge_spec plot 0 lin ode "${Lo[@]}"
edge_spec rtol 0 lin ode "${Lo[@]}"
edge_spec atol 0 lin ode "${Lo[@]}"
edge_spec c_min 0 tune "${T[@]}"
edge_spec c_max 0 tune "${T[@]}"
edge_spec heatmap 0 tune "${T[@]}"
edge_spec confirm_seeds 0 tune "${T[@]}"

edge_spec d 0 rf simulate "${R[@]}"
edge_spec n 0 rf simulate "${R[@]}"
edge_spec p 0 rf simulate "${R[@]}"
edge_spec n_test 0 rf simulate "${R[@]}"
edge_spec steps 0 rf simulate "${R[@]}"
edge_spec eta 0 rf ou "${R[@]}"
edge_spec clip 1 rf simulate "${R[@]}" --sigma=1
edge_spec sigma 0 rf simulate "${R[@]}" --clip=1
edge_spec epsilon 0 rf simulate "${R[@]}" --clip=1
edge_spec delta 0 rf simulate "${R[@]}" --clip=1 --epsilon=1
edge_spec zeta 0 rf ou "${R[@]}"
edge_spec seeds 0 rf simulate "${R[@]}"
edge_spec seed 0 rf compare "${R[@]}" --plot=0
edge_spec threads 0 rf simulate "${R[@]}"
edge_spec grid 0 rf ou "${R[@]}"
edge_spec plot 0 rf simulate "${R[@]}"
edge_spec steps 0 rfacct account --model=rf --eta=0.1 --steps=10 --epsilon=1 --delta=1e-3

run_edges &
edge_runner=$!

# ---------------------------------------------------------------------------------------------
# 2. The rows of the input-hardening issue.
f=$work/f
printf '0 1\n1 0.5\n' >"$f/sched_ok.txt"
tcase levels_overflow 1 "'spectrum'" -- ode --d=5 --n=20 \
  --spectrum='levels:1*9223372036854775808,2*9223372036854775808,1*5'
tcase levels_3e9 1 "'spectrum'" -- ode --n=20 --spectrum='levels:1*3000000000'

long=$(printf 'x%.0s' $(seq 1 220))
printf 'd = 5\nn = 20\ngrid = 3\n# %s rho = 0.001\n; %s rho = 0.001\n' "$long" "$long" \
  >"$f/longcomment.ini"
tcase ini_long_comment 0 'j["rho"] is None and j["nonfinite"]["rho"] == "inf" and j["params"]["rho"] is None and j["nonfinite"]["params.rho"] == "inf"' -- \
  ode "$f/longcomment.ini"
printf 'd = 5\nzeta = 0.%s\nn = 20\n' "$(printf '1%.0s' $(seq 1 200))" >"$f/longkey.ini"
tcase ini_long_key_line 1 "line 2 is longer than 197" -- ode "$f/longkey.ini"
# The limit itself: a key line of exactly 197 characters is read.
printf 'd = 5\nn = 20\nzeta = 0.%s\n' "$(printf '5%.0s' $(seq 1 188))" >"$f/key197.ini"
tcase ini_key_line_197 0 'abs(j["params"]["zeta"] - 0.5555555555) < 1e-9' -- ode "$f/key197.ini"
printf 'd = 5\nn = 20\nzeta = 0.%s\n' "$(printf '5%.0s' $(seq 1 189))" >"$f/key198.ini"
tcase ini_key_line_198 1 "line 3 is longer than 197" -- ode "$f/key198.ini"

run_zero() { # NAME KEY ARGS... : /dev/zero as input, exit 1 at once
  local name=$1 key=$2
  shift 2
  TIMEOUT=10 tcase "$name" 1 "$key" -- "$@"
}
# A device is refused before it is read (a regular file with a NUL byte: ini_nul, below).
run_zero spectrum_dev_zero "'spectrum'.*'/dev/zero' is a character device" ode --d=5 --n=20 --spectrum=file:/dev/zero
run_zero theta_dev_zero "'theta_star'.*'/dev/zero' is a character device" ode --d=5 --n=20 --theta_star=file:/dev/zero
run_zero schedule_dev_zero "'schedule'.*'/dev/zero' is a character device" ode --d=5 --n=20 --schedule=file:/dev/zero
run_zero sequence_dev_zero "'sequence'.*'/dev/zero' is a character device" account --sequence=/dev/zero
run_zero ini_dev_zero "INI file '/dev/zero' is a character device" ode /dev/zero
printf '1 0\n2 0\n' >"$work/f/nul.txt"
printf '\0' >>"$work/f/nul.txt"
tcase spectrum_nul_byte 1 "'spectrum'.*NUL byte on line 3" -- ode --n=20 --spectrum="file:$work/f/nul.txt"

# FIFOs without a writer, given to every file key: exit 1 at once naming the key and the path
# (they hung in open()). TIMEOUT turns a hang into a failure.
mkfifo "$work/f/fifo" "$work/f/fifo.npy" "$work/f/fifo.csv"
fifo_case() { # NAME KEY ARGS...
  local name=$1 key=$2
  shift 2
  TIMEOUT=10 tcase "fifo_$name" 1 "$key.*fifo[.a-z]*' is a FIFO" -- "$@"
}
printf '1 2 0\n2 1 1\n0 0 0\n1 1 1\n' >"$work/f/nc_ok.txt"
NCF=(simulate --model=nc --features="file:$work/f/nc_ok.txt" --test_features="file:$work/f/nc_ok.txt" --x_bound=5 --sigma=1)
SPF=(simulate --model=semipriv --features="file:$work/f/nc_ok.txt" --labels="file:$work/f/nc_ok.txt"
  --public_features="file:$work/f/nc_ok.txt" --test_features="file:$work/f/nc_ok.txt" --zeta=0.1)
fifo_case spectrum "'spectrum'" ode --d=5 --n=20 --spectrum="file:$work/f/fifo"
fifo_case theta_star "'theta_star'" ode --d=5 --n=20 --theta_star="file:$work/f/fifo"
fifo_case schedule "'schedule'" ode --d=5 --n=20 --schedule="file:$work/f/fifo"
fifo_case sequence "'sequence'" account --sequence="$work/f/fifo"
fifo_case ini "INI file" ode "$work/f/fifo"
fifo_case sweep_ini "INI file" sweep ode "$work/f/fifo"
printf '1\n2\n0\n1\n' >"$work/f/nc_y.txt"
for k in features labels test_features test_labels; do
  extra=()
  [ "$k" = labels ] && extra=(--test_labels="file:$work/f/nc_y.txt") # labels apart: both files
  fifo_case "nc_$k" "'$k'" "${NCF[@]}" "${extra[@]}" --$k="file:$work/f/fifo"
  fifo_case "nc_${k}_npy" "'$k'" "${NCF[@]}" "${extra[@]}" --$k="file:$work/f/fifo.npy"
done
for k in features labels public_features test_features test_labels; do
  fifo_case "semipriv_$k" "'$k'" "${SPF[@]}" --$k="file:$work/f/fifo.csv"
  fifo_case "semipriv_${k}_npy" "'$k'" "${SPF[@]}" --$k="file:$work/f/fifo.npy"
done
fifo_case nc_diagnose "'features'" diagnose --model=nc --features="file:$work/f/fifo.npy"

# Errors name the key the user set, not a derived one: nc beta/offset/beta_test = 1e300 said
# "'sigma': inf", semipriv c|s|nu|trunc = 1e300 "'zeta'", entries of 1e200 in data files
# "LAPACKE_dsyev failed" or a CVode error (exit 2).
NC=(simulate --model=nc --K=3 --p=8 --n=30 --n_test=30 --seeds=2 --epsilon=1)
tcase nc_beta_1e300 1 "'beta': 1e\+300 \(allowed: 0 <= beta <= 1e150 / sqrt\(p\)" -- "${NC[@]}" --shift=cube --beta=1e300
tcase nc_offset_1e300 1 "'offset': 1e\+300 \(allowed:" -- "${NC[@]}" --offset=1e300
tcase nc_beta_test_1e300 1 "'beta_test': 1e\+300 \(allowed:" -- "${NC[@]}" --test_shift=cube --beta_test=1e300
for k in c s nu trunc; do
  tcase "semipriv_${k}_1e300" 1 "'$k': 1e\+300 \(allowed: $k <= [0-9.e+]+ " -- simulate --model=semipriv --seeds=2 --$k=1e300
done
tcase semipriv_lambda_1e300 1 "'lambda': sum 1e\+300" -- simulate --model=semipriv --seeds=2 --lambda=1e300,1,1,1
printf '1e200\n1\n1\n1\n1\n' >"$f/th_1e200.txt"
tcase theta_file_1e200 1 "'theta_star': 1e\+200 on data line 1 .*1e150" -- ode "${Lo[@]}" --theta_star="file:$f/th_1e200.txt"
printf '0 1 0\n1 0 1\n2 1 1e200\n1 0 1\n' >"$f/nc_1e200.txt"
tcase nc_features_1e200 1 "'features': 1e\+200 in row 3, feature column 2 .*1e150" -- \
  simulate --model=nc --features="file:$f/nc_1e200.txt" --test_features="file:$work/f/nc_ok.txt" --x_bound=5 --seeds=2
tcase nc_diagnose_1e200 1 "'features': 1e\+200 in row 3" -- diagnose --model=nc --features="file:$f/nc_1e200.txt"
tcase nc_test_features_1e200 1 "'test_features': 1e\+200 in row 3" -- \
  simulate --model=nc --features="file:$work/f/nc_ok.txt" --test_features="file:$f/nc_1e200.txt" --x_bound=5 --seeds=2
printf '1 1 0\n-1 0 1\n1 1 1e200\n-1 0 1\n' >"$f/sp_1e200.txt"
printf '1 1 0\n-1 0 1\n1 1 0\n-1 0 1\n' >"$f/sp_ok.txt"
tcase semipriv_features_1e200 1 "'features': 1e\+200 in row 3, feature column 2 .*1e150" -- \
  simulate --model=semipriv --features="file:$f/sp_1e200.txt" --public_features="file:$f/sp_ok.txt" \
  --test_features="file:$f/sp_ok.txt" --zeta=0.1 --k=1 --seeds=2

{
  printf '#'
  printf 'c%.0s' $(seq 1 5000)
  printf '\n1.0 3\n2.0 2\n'
} >"$f/spec_comment.txt"
tcase data_long_comment 0 'j["d"] == 5 and j["distinct_eigenvalues"] == 2' -- \
  ode --n=20 --grid=3 --spectrum="file:$f/spec_comment.txt"
printf '1.0 1111111111111311\n' >"$f/spec_huge.txt"
tcase spectrum_file_huge 1 "'spectrum'" -- ode --n=20 --spectrum="file:$f/spec_huge.txt"
# Memory limits (max_memory pinned: the default is half the RAM of whatever machine runs this).
tcase d_2147483647 1 "'d'.*max_memory" -- ode --d=2147483647 --n=8589934588 \
  --theta_star=random --compress=off --max_memory=8G
# compare with fewer than 8 replicates warns (summary and stderr): its SEs are unreliable.
# (finite_size=auto: at d = 20 the asymptotic ODE would add its own finite-size warning)
tcase compare_seeds4_warns 0 'len(j["warnings"]) == 1 and "seeds = 4" in j["warnings"][0]' -- \
  compare --d=20 --n=80 --c=1 --rho=2 --seeds=4 --grid=5 --finite_size=auto
tcase compare_seeds8_quiet 0 '"warnings" not in j' -- compare --d=20 --n=80 --c=1 --rho=2 \
  --seeds=8 --grid=5 --finite_size=auto
# finite_size (docs/finite_size.md): the asymptotic ODE warns where |x|^2/d fluctuates (d = 20:
# sqrt(m2) = 0.32), auto applies the correction, and the summary reports the diagnostics.
tcase finite_size_off_warns 0 'j["finite_size"] is False and len(j["warnings"]) == 1 and "finite_size" in j["warnings"][0] and abs(j["m2"] - 0.1) < 1e-12' -- \
  ode --d=20 --n=80 --c=1 --rho=2 --finite_size=off
tcase finite_size_auto_applies 0 'j["finite_size"] is True and "warnings" not in j and abs(j["lambda_max_over_d"] - 0.05) < 1e-12' -- \
  ode --d=20 --n=80 --c=1 --rho=2 --finite_size=auto
tcase finite_size_auto_large_d 0 'j["finite_size"] is False and "warnings" not in j' -- \
  ode --d=400 --n=1600 --c=1 --rho=2 --finite_size=auto
tcase finite_size_bad 1 "'finite_size'" -- ode --d=20 --n=80 --finite_size=maybe
tcase finite_size_volterra 1 "'finite_size'.*volterra" -- ode --d=20 --n=80 --finite_size=on \
  --method=volterra
# Spectral compression: the ODE of an analytic spectrum needs no array of d numbers.
tcase d_1e9_compressed 0 'j["compressed"] and j["ode_groups"] < 1000 and j["compress_error_estimate"] <= 1e-9' -- \
  ode --d=1000000000 --n=4000000000 --spectrum=powerlaw:1 --theta_star=flat --c=0.5 --rho=1 \
  --schedule=sqrt --eta0=2 --max_memory=64M
tcase simulate_1e9 1 "'n'.*max_memory" -- simulate --d=1000000000 --n=4000000000 --threads=1 \
  --max_memory=8G
tcase rf_p_1e6 1 "'p'.*max_memory" -- simulate --model=rf --p=1000000 --n=20000
tcase compare_missing_n 1 "missing value for 'n'" -- compare --d=100000000
# ... at once: d = 1e8 costs no more CPU time than d = 5 (before the fix it built the problem).
# shellcheck disable=SC2031 # the main shell's scratch
cpu_ms() { # ARGS... : user + system CPU milliseconds of one dpdyn run
  local TIMEFORMAT='%3U %3S' u s
  { time "$dpdyn" "$@" >/dev/null 2>&1; } 2>"$scratch/time"
  read -r u s <"$scratch/time"
  echo $((10#${u/./} + 10#${s/./}))
}
small_ms=$(cpu_ms compare --d=5 --out="$work/o/cpu_small")
big_ms=$(cpu_ms compare --d=100000000 --out="$work/o/cpu_big")
if [ $((big_ms - small_ms)) -lt 300 ] && [ ! -e "$work/o/cpu_big" ]; then
  ok "compare_missing_n_fast: $big_ms ms CPU (d = 5: $small_ms ms)"
else
  fail compare_missing_n_fast "$big_ms ms CPU with d = 1e8, $small_ms ms with d = 5"
fi
tcase rf_n_1 1 "^[^']*'n'" -- simulate --model=rf --n=1 --d=5 --p=30 --n_test=10 --steps=5
tcase step_factor_huge 1 "'factor'" -- ode "${Lo[@]}" --schedule=step --factor=1e300
tcase cosine_eta_min_huge 1 "'eta_min'" -- ode "${Lo[@]}" --schedule=cosine --eta_min=1e300
na='all(j[k] is None and k in j["not_available"] for k in ("sigma_moments", "epsilon_of_sigma_moments", "sigma_ratio_moments_over_exact"))'
tcase rf_sigma_zero 0 "$na" -- simulate "${R[@]}" --sigma=0
tcase rf_ou_nonprivate 0 "$na" -- ou "${R[@]}"

printf '0\n0\n0\n0\n0\n' >"$f/theta0.txt"
tcase theta_all_zero 1 "'theta_star'" -- ode "${Lo[@]}" --theta_star="file:$f/theta0.txt"
printf '0.6\n0.8\n0\n0\n0\n' >"$f/theta1.txt"
printf '1\n2\n2\n0\n0\n' >"$f/theta3.txt"
# iso spectrum: the initial excess risk is |theta*|^2 / 2.
tcase theta_file_norm1 0 'abs(j["params"]["theta_norm"] - 1) < 1e-12 and abs(j["initial_excess_risk"] - 0.5) < 1e-12' -- \
  ode "${Lo[@]}" --theta_star="file:$f/theta1.txt"
tcase theta_file_norm1_rescaled 0 'j["params"]["theta_norm"] == 2 and abs(j["initial_excess_risk"] - 2) < 1e-12' -- \
  ode "${Lo[@]}" --theta_star="file:$f/theta1.txt" --theta_norm=2
tcase theta_file_norm3 0 'j["params"]["theta_norm"] == 3 and abs(j["initial_excess_risk"] - 4.5) < 1e-12' -- \
  ode "${Lo[@]}" --theta_star="file:$f/theta3.txt"
tcase theta_file_norm3_rescaled 0 'j["params"]["theta_norm"] == 2 and abs(j["initial_excess_risk"] - 2) < 1e-12' -- \
  ode "${Lo[@]}" --theta_star="file:$f/theta3.txt" --theta_norm=2

# dpdyn plot on a trajectory.tsv cut down to its `#` lines and header row: exit 1, nothing
# rendered.
tcase plot_source 0 "" -- ode "${Lo[@]}"
cp -r "$work/o/plot_source" "$work/o/plot_cut"
awk '/^#/ { print; next } { print; exit }' "$work/o/plot_source/trajectory.tsv" >"$work/o/plot_cut/trajectory.tsv"
NOOUT=1 tcase plot_header_only 1 "no data rows" -- plot "$work/o/plot_cut"
if compgen -G "$work/o/plot_cut/*.gp" >/dev/null || compgen -G "$work/o/plot_cut/*.png" >/dev/null; then
  fail plot_header_only_nothing_written "$(ls "$work/o/plot_cut")"
else
  ok plot_header_only_nothing_written
fi

printf 'd = 5\nzeta = 0.1\nn = 20\nzeta = 0.2\n' >"$f/twice.ini"
tcase ini_key_twice 1 "'zeta' is set twice .* lines 2 and 4" -- ode "$f/twice.ini"
printf 'd = 5\nn = 20\ngrid = 3\nzeta = 0.1\n' >"$f/zeta.ini"
tcase ini_flag_wins 0 'j["params"]["zeta"] == 0.25' -- ode "$f/zeta.ini" --zeta=0.25
tcase ini_flag_wins_before 0 'j["params"]["zeta"] == 0.25' -- ode --zeta=0.25 "$f/zeta.ini"

for v in 0 12x -1 nan inf 1e400 ' 7 ' 1023K 99999999999999999999T M ''; do
  label=$(printf '%s' "$v" | tr -c 'A-Za-z0-9' '_')
  tcase "max_memory_bad_${label:-empty}" 1 "'max_memory'" -- ode "${Lo[@]}" --max_memory="$v"
done
tcase max_memory_1M_ok 0 "" -- ode "${Lo[@]}" --max_memory=1M
tcase max_memory_1M_n 1 "'n'.*max_memory" -- simulate --d=5 --n=200000 --max_memory=1M
tcase max_memory_1M_d 1 "'d'.*max_memory" -- ode --d=100000 --n=1000000 --compress=off \
  --max_memory=1M
tcase max_memory_1M_seeds 1 "'seeds'.*max_memory" -- simulate "${L[@]}" --seeds=100000 \
  --grid=101 --max_memory=1M
tcase max_memory_1M_spectrum 1 "'spectrum'.*max_memory" -- ode --n=1000000 \
  --spectrum='levels:1*100000' --compress=off --max_memory=1M
tcase max_memory_1M_rf_p 1 "'p'.*max_memory" -- simulate "${R[@]}" --p=5000 --max_memory=1M
tcase max_memory_1M_rf_n 1 "'n'.*max_memory" -- ou "${R[@]}" --n=2000 --max_memory=1M

# ---------------------------------------------------------------------------------------------
# 3. Other malformed input.
# The command line.
NOOUT=1 tcase unknown_command 1 "unknown command 'frobnicate'" -- frobnicate --d=5
NOOUT=1 tcase unknown_command_flag 1 "unknown command '--colour'" -- --colour
run
if [ "$rc" -eq 1 ] && [[ ${errlines[0]:-} == usage:* ]]; then
  ok no_command_usage
else
  fail no_command_usage "exit $rc: $(stderr_text)"
fi
NOOUT=1 tcase plot_no_dir 1 "missing output directory" -- plot
NOOUT=1 tcase plot_unknown_option 1 "unknown option '--colour=red'" -- plot "$work/o/plot_source" --colour=red
NOOUT=1 tcase plot_bad_format 1 "'format': 'jpg'" -- plot "$work/o/plot_source" --format=jpg
NOOUT=1 tcase plot_two_dirs 1 "unexpected argument" -- plot "$work/o/plot_source" "$work/o/plot_cut"
mkdir -p "$work/foreign"
echo "my notes" >"$work/foreign/notes.txt"
NOOUT=1 tcase plot_foreign_dir 1 "trajectory.tsv" -- plot "$work/foreign"
NOOUT=1 tcase plot_missing_dir 1 "trajectory.tsv" -- plot "$work/nowhere"
NOOUT=1 tcase plot_file_not_dir 1 "trajectory.tsv" -- plot "$work/foreign/notes.txt"
cp -r "$work/o/plot_source" "$work/o/plot_nofig"
grep -v '^# \(figure\|command\):' "$work/o/plot_source/trajectory.tsv" >"$work/o/plot_nofig/trajectory.tsv"
NOOUT=1 tcase plot_no_figure_header 1 "no '# figure:'" -- plot "$work/o/plot_nofig"
sed -i 's/^# figure: .*/# figure: nosuchfigure/' "$work/o/plot_source/trajectory.tsv"
NOOUT=1 tcase plot_unknown_figure 1 "no figure 'nosuchfigure'" -- plot "$work/o/plot_source"

# --out
stamp=$(stat -c '%Y %s' "$work/foreign/notes.txt")
NOOUT=1 tcase out_foreign_file 1 "'out'.*notes.txt" -- ode "${Lo[@]}" --out="$work/foreign"
if [ "$(cat "$work/foreign/notes.txt")" = "my notes" ] &&
  [ "$(stat -c '%Y %s' "$work/foreign/notes.txt")" = "$stamp" ] &&
  [ "$(ls -A "$work/foreign")" = notes.txt ]; then
  ok out_foreign_file_untouched
else
  fail out_foreign_file_untouched "$(ls -A "$work/foreign")"
fi
mkdir -p "$work/withsub/sub"
NOOUT=1 tcase out_foreign_subdir 1 "'out'.*directory 'sub'" -- ode "${Lo[@]}" --out="$work/withsub"
NOOUT=1 tcase out_is_file 1 "'out'.*not a directory" -- ode "${Lo[@]}" --out="$work/foreign/notes.txt"
for v in dot:. dotdot:.. root:/ dot_slash:./ end_dot:$work/o/. end_dotdot:$work/o/.. empty:; do
  NOOUT=1 tcase "out_${v%%:*}" 1 "'out'" -- ode "${Lo[@]}" --out="${v#*:}"
done
NOOUT=1 tcase out_name_too_long 1 "'out'" -- ode "${Lo[@]}" --out="$work/o/$(printf 'o%.0s' $(seq 1 300))"
# A directory of dpdyn output is replaced whole.
tcase replace_source 0 "" -- ode "${Lo[@]}"
OUT="$work/o/replace_source" tcase replace_dpdyn_dir 0 'j["params"]["zeta"] == 0.25' -- \
  ode "${Lo[@]}" --zeta=0.25

# Flags.
NOOUT=1 tcase flag_no_value_end 1 "flag '--n' has no value" -- ode --d=5 --n
tcase flag_empty_key 1 "malformed flag '--=5'" -- ode "${Lo[@]}" --=5
tcase flag_dashdash 1 "malformed flag '--'" -- ode "${Lo[@]}" --
tcase flag_key_200 1 "malformed flag" -- ode "${Lo[@]}" "--$(printf 'k%.0s' $(seq 1 200))=1"
tcase flag_twice_later_wins 0 'j["params"]["zeta"] == 0.2' -- ode "${Lo[@]}" --zeta=0.1 --zeta=0.2
# A note for a flag without effect comes only after success, never before an error line.
NOOUT=1 tcase note_then_error 1 "'out'" -- ode "${Lo[@]}" --seeds=2 --out=.
tcase note_then_failure 2 "CVode" -- ode "${Lo[@]}" --seeds=2 --rtol=1e-300 --atol=1e-300
tcase flag_space_form 0 'j["d"] == 5 and j["n"] == 20' -- ode --d 5 --n 20 --grid 3
tcase flag_unknown_rf 1 "unknown key 'width'" -- simulate "${R[@]}" --width=3
tcase two_positionals 1 "unexpected argument" -- ode "$f/zeta.ini" "$f/zeta.ini"
tcase stray_positional 1 "cannot open INI file 'five'" -- ode "${Lo[@]}" five
digits300=$(printf '1%.0s' $(seq 1 300))
digits298=${digits300:2}
tcase value300_real 1 "'zeta'.*300 characters" -- simulate "${L[@]}" --zeta="0.$digits298"
tcase value300_int 1 "'d'" -- ode "${Lo[@]}" --d="$digits300"
tcase value300_string 1 "'schedule'" -- ode "${Lo[@]}" --schedule="$digits300"
# ALPHA = 1.1e299: every eigenvalue but the first underflows to 0, a valid degenerate spectrum.
tcase value300_spectrum 0 'j["distinct_eigenvalues"] == 2' -- ode "${Lo[@]}" --spectrum="powerlaw:$digits300"
tcase value300_rf 1 "'eta'.*300 characters" -- ou "${R[@]}" --eta="0.$digits298"
# A value with a newline must not break the one-line message.
# (control characters of the input are shown as escapes: \n)
tcase newline_value 1 "'zeta'" -- simulate "${L[@]}" --zeta=$'0.5\nfoo'
tcase newline_string 1 "'schedule'" -- ode "${Lo[@]}" --schedule=$'const\nsqrt'
tcase newline_key 1 "unknown key" -- ode "${Lo[@]}" --$'a\nb'=1
tcase newline_path 1 "'spectrum'" -- ode "${Lo[@]}" --spectrum=file:$'/nonexistent\nfile'
tcase newline_trimmed_int 0 'j["d"] == 5' -- ode "${Lo[@]}" --d=$'5\n'
tcase nonutf8_noise 1 "'noise'" -- simulate "${L[@]}" --noise=$'\xff\xfe'
tcase nonutf8_zeta 1 "'zeta'" -- simulate "${L[@]}" --zeta=$'0.5\xff'
tcase nonutf8_activation 1 "'activation'" -- simulate "${R[@]}" --activation=$'tanh\xc3'
tcase nonutf8_key 1 "unknown key" -- ode "${Lo[@]}" --$'\xff\xfe'=1
tcase empty_value_real 1 "'zeta'" -- simulate "${L[@]}" --zeta=
tcase empty_value_int 1 "'seeds'" -- simulate "${L[@]}" --seeds=
tcase empty_value_string 1 "'schedule'" -- ode "${Lo[@]}" --schedule=
tcase int_with_fraction 1 "'n'" -- ode "${Lo[@]}" --n=20.5
tcase real_trailing_garbage 1 "'zeta'" -- simulate "${L[@]}" --zeta=0.5x
tcase real_infinity_word 1 "'c'" -- simulate "${L[@]}" --rho=1 --c=infinity
tcase real_minus_inf 1 "'c'" -- simulate "${L[@]}" --rho=1 --c=-inf
tcase seed_negative 1 "'seed'" -- simulate "${L[@]}" --seed=-1
tcase seed_2_64 1 "'seed'" -- simulate "${L[@]}" --seed=18446744073709551616
tcase seed_2_64_minus_1 0 'j["seed"] > 1.8e19' -- simulate "${L[@]}" --seed=18446744073709551615
tcase threads_4097 1 "'threads'" -- simulate "${L[@]}" --threads=4097
tcase grid_1 1 "'grid'" -- ode "${Lo[@]}" --grid=1
tcase heatmap_1 1 "'heatmap'" -- "${T[@]}" --heatmap=1
tcase heatmap_1002 1 "'heatmap'" -- "${T[@]}" --heatmap=1002
tcase heatmap_eta_bad 1 "'heatmap_eta'" -- "${T[@]}" --heatmap_eta=cubic
tcase tune_list_bad 1 "'tune'" -- "${T[@]}" --tune=c,c
tcase tune_list_empty 1 "'tune'" -- "${T[@]}" --tune=
tcase tune_c_max_below_min 1 "'c_max'" -- "${T[@]}" --c_min=5 --c_max=1
tcase tune_file_schedule 1 "'schedule'" -- "${T[@]}" --schedule="file:$f/sched_ok.txt"
tcase tune_rf 1 "'model': 'rf'" -- tune "${R[@]}"
tcase sde_rf 1 "'model': 'rf'" -- sde "${R[@]}"
tcase gamma_inconsistent 1 "'gamma'" -- ode "${Lo[@]}" --gamma=0.5
tcase gamma_tiny 1 "'gamma'" -- ode --d=5 --gamma=1e-300
tcase eps_and_rho 1 "'epsilon'" -- account "${Lo[@]}" --c=1 --rho=1 --epsilon=1 --delta=1e-3
tcase noise_student_empty 1 "'noise'" -- simulate "${L[@]}" --noise=student:
tcase noise_student_nan 1 "'noise'" -- simulate "${L[@]}" --noise=student:nan
tcase noise_student_inf 1 "'noise'" -- simulate "${L[@]}" --noise=student:inf
tcase noise_student_ok 0 'j["noise_law"].startswith("student")' -- simulate "${L[@]}" --noise=student:5
tcase powerlaw_nan 1 "'spectrum'" -- ode "${Lo[@]}" --spectrum=powerlaw:nan
tcase powerlaw_inf 1 "'spectrum'" -- ode "${Lo[@]}" --spectrum=powerlaw:inf
tcase powerlaw_e400 1 "'spectrum'" -- ode "${Lo[@]}" --spectrum=powerlaw:1e400
tcase powerlaw_empty 1 "'spectrum'" -- ode "${Lo[@]}" --spectrum=powerlaw:
tcase levels_empty 1 "'spectrum'" -- ode "${Lo[@]}" --spectrum=levels:
tcase levels_trailing_comma 1 "'spectrum'" -- ode "${Lo[@]}" --spectrum='levels:1*5,'
tcase levels_nan 1 "'spectrum'" -- ode "${Lo[@]}" --spectrum='levels:nan*5'
tcase levels_inf 1 "'spectrum'" -- ode "${Lo[@]}" --spectrum='levels:inf*5'
tcase levels_negative_mult 1 "'spectrum'" -- ode "${Lo[@]}" --spectrum='levels:1*-5'
tcase levels_mult_garbage 1 "'spectrum'" -- ode "${Lo[@]}" --spectrum='levels:1*5x'
tcase levels_ok 0 'j["distinct_eigenvalues"] == 2' -- ode --n=20 --grid=3 --spectrum='levels:1*3,2*2'
tcase spectrum_file_empty_path 1 "'spectrum'" -- ode "${Lo[@]}" --spectrum=file:
tcase spectrum_file_missing 1 "'spectrum'.*cannot open" -- ode "${Lo[@]}" --spectrum="file:$f/none.txt"
tcase spectrum_file_is_dir 1 "'spectrum'" -- ode "${Lo[@]}" --spectrum="file:$f"
tcase theta_unknown 1 "'theta_star'" -- ode "${Lo[@]}" --theta_star=zero
tcase theta_norm_zero 1 "'theta_norm'" -- ode "${Lo[@]}" --theta_norm=0
tcase method_volterra_ok 0 'j["lower_bound_before_release"] is None and "lower_bound_before_release" in j["not_available"]' -- \
  ode "${Lo[@]}" --method=volterra
tcase volterra_clipped 1 "'c': 1 with method = volterra" -- ode "${Lo[@]}" --method=volterra --c=1
tcase volterra_sqrt 1 "'schedule'" -- ode "${Lo[@]}" --method=volterra --schedule=sqrt
tcase rf_moments_ok 0 "" -- simulate "${R[@]}" --clip=1 --epsilon=1 --calibration=moments
tcase rf_account_ok 0 "" -- account --model=rf --eta=0.1 --steps=10 --epsilon=1 --delta=1e-3
tcase rf_account_sigma_huge 0 "" -- account --model=rf --eta=0.1 --steps=10 --sigma=1e300 --delta=1e-3
tcase rf_eta_unstable 2 "stability limit" -- ou "${R[@]}" --eta=1000
tcase rtol_too_small 2 "CVode" -- ode "${Lo[@]}" --rtol=1e-300 --atol=1e-300
tcase dt_too_many_steps 1 "'dt'" -- sde "${L[@]}" --dt=1e-17
tcase account_huge_n 1 "'n'.*max_memory" -- account --d=5 --n=1099511627776 --c=1 --rho=1
tcase rf_account_huge_steps 0 "" -- account --model=rf --eta=1e-12 --steps=1099511627776 --epsilon=1 --delta=1e-3
tcase rf_huge_steps_2_seeds 1 "'steps'.*max_memory" -- simulate "${R[@]}" --steps=1099511627776
# The term is seeds x steps: the message names steps, which the user set, not the default seeds.
tcase rf_huge_steps 1 "'steps'.*max_memory" -- simulate --model=rf --d=5 --n=20 --p=30 --n_test=10 --steps=1099511627776
tcase model_nc 1 "'model': 'nc'" -- ode "${Lo[@]}" --model=nc
tcase model_unknown 1 "'model': 'pillar'" -- simulate "${L[@]}" --model=pillar
tcase model_semipriv_ode 1 "'model': 'semipriv'" -- ode "${Lo[@]}" --model=semipriv
tcase model_upper 1 "'model': 'RF'" -- simulate "${R[@]}" --model=RF
tcase model_empty 1 "'model': ''" -- simulate "${L[@]}" --model=
tcase noise_upper 1 "'noise': 'GAUSSIAN'" -- simulate "${L[@]}" --noise=GAUSSIAN
tcase rf_activation_empty 1 "'activation'" -- simulate "${R[@]}" --activation=
tcase rf_target_empty 1 "'target'" -- ou "${R[@]}" --target=
tcase rf_input_empty 1 "'input'" -- compare "${R[@]}" --input=
tcase rf_calibration_empty 1 "'calibration'" -- simulate "${R[@]}" --clip=1 --epsilon=1 --calibration=
tcase method_empty 1 "'method'" -- ode "${Lo[@]}" --method=
NOOUT=1 tcase sweep_command 1 "." -- sweep "${L[@]}"

# Every command and model with an unknown key.
for cmd in simulate sde ode compare account tune; do
  tcase "unknown_key_$cmd" 1 "unknown key 'colour'" -- "$cmd" "${L[@]}" --colour=red
done
for cmd in simulate ou compare account; do
  tcase "unknown_key_rf_$cmd" 1 "unknown key 'colour'" -- "$cmd" "${R[@]}" --colour=red
done

# INI files.
: >"$f/empty.ini"
tcase ini_empty 0 'j["d"] == 5' -- ode "$f/empty.ini" "${Lo[@]}"
tcase ini_empty_alone 1 "missing value for 'd'" -- ode "$f/empty.ini"
printf '[linreg]\n[more]\n' >"$f/sections.ini"
tcase ini_only_sections 0 'j["d"] == 5' -- ode "$f/sections.ini" "${Lo[@]}"
printf '\xef\xbb\xbfd = 5\nn = 20\ngrid = 3\nzeta = 0.125\n' >"$f/bom.ini"
tcase ini_bom 0 'j["d"] == 5 and j["params"]["zeta"] == 0.125' -- ode "$f/bom.ini"
printf 'd = 5\r\nn = 20\r\ngrid = 3\r\nzeta = 0.125\r\nschedule = const\r\n' >"$f/crlf.ini"
tcase ini_crlf 0 'j["n"] == 20 and j["params"]["zeta"] == 0.125 and j["params"]["schedule"] == "const"' -- \
  ode "$f/crlf.ini"
printf '\xef\xbb\xbf[run]\r\nd = 5\r\nn = 20\r\n' >"$f/bomcrlf.ini"
tcase ini_bom_crlf 0 'j["n"] == 20' -- ode "$f/bomcrlf.ini" --grid=3
printf 'd = 5\nn = 2\x000\n' >"$f/nul.ini"
tcase ini_nul 1 "NUL byte on line 2" -- ode "$f/nul.ini"
printf 'd = 5\nn = 20\nzeta =\n' >"$f/emptyvalue.ini"
tcase ini_empty_value 1 "'zeta'" -- simulate "$f/emptyvalue.ini" --seeds=2 --grid=3
printf 'd = 5\nn = 20\nnoise = \xff\xfe\n' >"$f/nonutf8.ini"
tcase ini_nonutf8_value 1 "'noise'" -- simulate "$f/nonutf8.ini" --seeds=2 --grid=3
printf 'd = 5\nn = 20 ; twenty\ngrid = 3\n' >"$f/inline.ini"
tcase ini_inline_comment 0 'j["n"] == 20' -- ode "$f/inline.ini"
printf '[x\nd = 5\n' >"$f/badsection.ini"
tcase ini_bad_section 1 "malformed INI file .* at line 1" -- ode "$f/badsection.ini" --n=20
printf 'd = 5\nn = 20 # twenty\n' >"$f/hash_inline.ini"
tcase ini_hash_inline 1 "'n': '20 # twenty'" -- ode "$f/hash_inline.ini"
printf 'd = 5\n  n = 20\n' >"$f/indent.ini"
tcase ini_indented_key 0 'j["n"] == 20' -- ode "$f/indent.ini" --grid=3
printf '= 5\n' >"$f/nokey.ini"
tcase ini_no_key 1 "INI" -- ode "$f/nokey.ini" --d=5 --n=20
printf 'model = rf\nd = 5\nn = 20\np = 30\nn_test = 10\nsteps = 5\nc = 1\n' >"$f/rf_c.ini"
# The shipped model files parse; a bad flag on top of one names the flag's key.
for ini in "$src"/models/linreg/*.ini "$src"/models/rf/*.ini; do
  cmd=ode
  [[ $ini == */rf/* ]] && cmd=simulate
  name=${ini#"$src"/models/}
  tcase "shipped_${name//[^A-Za-z0-9]/_}" 1 "'zeta': 'nan'" -- "$cmd" "$ini" --zeta=nan
done
tcase ini_rf_linreg_key 1 "key 'c' does not apply to model=rf" -- simulate "$f/rf_c.ini"
tcase ini_is_dir 1 "INI file" -- ode "$f" --d=5 --n=20
yes '# a comment line of an INI file that is far too large' | head -c 1100000 >"$f/big.ini"
tcase ini_too_big 1 "larger than" -- ode "$f/big.ini" --d=5 --n=20

# Data files: spectrum (1 or 2 columns), schedule (t eta), theta_star (1), sequence (eta sigma).
spec_case() { # NAME WANT PATTERN CONTENT
  printf '%b' "$4" >"$f/spec_$1.txt"
  tcase "spectrum_file_$1" "$2" "$3" -- ode --n=20 --grid=3 --spectrum="file:$f/spec_$1.txt"
}
spec_case nan 1 "'spectrum'.*line 2 is malformed" '1.0 3\nnan 2\n'
spec_case inf 1 "'spectrum'.*line 1 is malformed" 'inf 3\n1.0 2\n'
spec_case negative 1 "'spectrum'.*eigenvalue -1" '1.0 3\n-1 2\n'
spec_case zero 1 "'spectrum'.*eigenvalue 0" '0 3\n1 2\n'
spec_case missing_column 1 "'spectrum'.*line 2 has 1 columns" '1.0 3\n2.0\n'
spec_case three_columns 1 "'spectrum'.*line 1 is malformed" '1.0 3 1\n'
spec_case comma_separated 0 'j["d"] == 5' '1.0,3\n2.0,2\n'
spec_case one_column 0 'j["d"] == 2' '1.0\n2.0\n'
spec_case fractional_mult 1 "'spectrum'.*multiplicity 2.5" '1.0 2.5\n2.0 2.5\n'
spec_case zero_mult 1 "'spectrum'.*multiplicity 0" '1.0 0\n2.0 5\n'
spec_case comments_only 1 "'spectrum'.*no data rows" '# nothing\n\n   \n'
spec_case empty 1 "'spectrum'.*no data rows" ''
spec_case garbage 1 "'spectrum'.*line 1 is malformed" 'one three\n'
spec_case e400 1 "'spectrum'.*line 1 is malformed" '1e400 5\n'
spec_case crlf 0 'j["d"] == 5' '1.0 3\r\n2.0 2\r\n'
spec_case two_rows 0 'j["d"] == 5 and j["distinct_eigenvalues"] == 2' '1.0 3\n2.0 2\n'
spec_case hex 1 "'spectrum'.*line 1 is malformed.*decimal" '0x1p3 3\n2.0 2\n'
spec_case huge_values 0 'abs(j["initial_excess_risk"] - 0.5) < 1e-12' '1e308 1\n1e308 1\n'
# Eigenvalues whose sum overflows are renormalised (found by fuzzing: they became 0, risk 0).
tcase levels_huge_values 0 'abs(j["initial_excess_risk"] - 0.5) < 1e-12' -- \
  ode --n=8 --grid=3 --spectrum=levels:1e308*1,1e308*1
# A pipe, even one with a writer, is not a regular file: refused (docs/input.md).
tcase spectrum_file_pipe 1 "'spectrum'.*is a FIFO or pipe" -- ode --n=20 --grid=3 --spectrum=file:<(printf '1 3\n2 2\n')
tcase spectrum_file_d_given 1 "'spectrum'.*but d = 6" -- ode --d=6 --n=20 --spectrum="file:$f/spec_two_rows.txt"
sched_case() { # NAME WANT PATTERN CONTENT
  printf '%b' "$4" >"$f/sched_$1.txt"
  tcase "schedule_file_$1" "$2" "$3" -- ode "${Lo[@]}" --schedule="file:$f/sched_$1.txt"
}
sched_case ok 0 'j["schedule"] != ""' '0 1\n0.5 0.8\n1 0.5\n'
sched_case unsorted 1 "'schedule'" '0 1\n0.7 0.8\n0.3 0.6\n1 0.5\n'
sched_case duplicate_t 1 "'schedule'" '0 1\n0.5 0.8\n0.5 0.7\n1 0.5\n'
sched_case one_row 1 "'schedule'" '0 1\n'
sched_case negative 1 "'schedule'.*eta = -0.1" '0 1\n0.5 -0.1\n1 0.5\n'
sched_case one_column 1 "'schedule'.*1 columns" '0\n1\n'
sched_case three_columns 1 "'schedule'.*malformed" '0 1 2\n1 1 2\n'
sched_case t_beyond_1 0 "" '0 1\n2 0.5\n'
sched_case t_from_half 1 "'schedule'" '0.5 1\n1 0.5\n'
sched_case t_to_0_9 1 "'schedule'" '0 1\n0.9 0.5\n'
sched_case nan 1 "'schedule'.*malformed" '0 1\n1 nan\n'
sched_case unstable 1 "'schedule'.*stability" '0 100\n1 100\n'
printf '0 0.5\n1 1\n' >"$f/sched_up.txt"
tcase schedule_file_increasing 1 "'schedule'.*increases" -- ode "${Lo[@]}" --c=1 --rho=1 \
  --schedule="file:$f/sched_up.txt"
theta_case() { # NAME WANT PATTERN CONTENT
  printf '%b' "$4" >"$f/th_$1.txt"
  tcase "theta_file_$1" "$2" "$3" -- ode "${Lo[@]}" --theta_star="file:$f/th_$1.txt"
}
theta_case six 1 "'theta_star'.*6 values but d = 5" '1\n1\n1\n1\n1\n1\n'
theta_case two_columns 1 "'theta_star'.*malformed" '1 1\n1 1\n1 1\n1 1\n1 1\n'
theta_case nan 1 "'theta_star'.*malformed" '1\n1\nnan\n1\n1\n'
theta_case negative_ok 0 'abs(j["params"]["theta_norm"] - 5 ** 0.5) < 1e-12' '-1\n1\n-1\n1\n-1\n'
theta_case empty 1 "'theta_star'.*no data rows" ''
tcase theta_file_missing 1 "'theta_star'.*cannot open" -- ode "${Lo[@]}" --theta_star=file:
seq_case() { # NAME WANT PATTERN CONTENT
  printf '%b' "$4" >"$f/seq_$1.txt"
  tcase "sequence_$1" "$2" "$3" -- account --sequence="$f/seq_$1.txt" --delta=1e-5
}
seq_case ok 0 'j["steps"] == 3 and j["rho_eff"] > 0' '0.1 1\n0.1 1\n0.1 2\n'
seq_case negative_eta 1 "'sequence'.*eta = -0.1" '0.1 1\n-0.1 1\n'
seq_case one_column 1 "'sequence'.*1 columns" '0.1\n0.1\n'
seq_case nan 1 "'sequence'.*malformed" '0.1 nan\n'
seq_case empty 1 "'sequence'.*no data rows" '# only a comment\n'
tcase sequence_missing 1 "'sequence'.*cannot open" -- account --sequence="$f/none.txt"
tcase sequence_extra_key 1 "key 'd' does not apply to account --sequence" -- \
  account --sequence="$f/seq_ok.txt" --d=5
tcase sequence_bad_delta 1 "'delta'" -- account --sequence="$f/seq_ok.txt" --delta=2

# ---------------------------------------------------------------------------------------------
# The edge runs' logs, in order.
wait "$edge_runner"
for ((i = 1; i <= ${#edges[@]}; i++)); do
  log=$work/s/edge$i.log
  if [ ! -e "$log" ]; then
    fail "edge$i" "no log: ${edges[i - 1]}"
    continue
  fi
  cat "$log"
  passes=$((passes + $(grep -c '^ok ' "$log")))
  fails=$((fails + $(grep -c '^FAIL ' "$log")))
  defects=$((defects + $(grep -c '^DEFECT ' "$log")))
done

# ---------------------------------------------------------------------------------------------
# Every exit-0 summary.json: strict JSON (no NaN/Infinity tokens), no "nan" anywhere, and the
# case's own expression; the variants whose text differed (strict_echo = 0): the same numbers.
# One python run; it prints "pass|defect<TAB>NAME<TAB>WHY" for each case to be failed.
if ! python3 - "$work/json.list" "$work/same.list" >"$work/post.fail" <<'PY'
import json, re, sys

def strict(token):
    raise ValueError("non-JSON constant " + token)

def num(x):
    if isinstance(x, str):
        try:
            return float(x.strip())
        except ValueError:
            return x
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    return x

def norm(o):
    if isinstance(o, dict):
        return {k: norm(v) for k, v in o.items() if k not in ("wall_seconds", "out")}
    if isinstance(o, list):
        return [norm(v) for v in o]
    return num(o)

def table(path):
    try:
        lines = open(path).read().splitlines()
    except FileNotFoundError:
        return None
    rows = []
    for line in lines:
        m = re.match(r"# (\w+) = (.*)$", line)
        if m:
            if m.group(1) != "out":
                rows.append((m.group(1), num(m.group(2))))
        else:
            rows.append(line)
    return rows

tolerated = {}
for line in open(sys.argv[2]):
    name, a, b = line.rstrip("\n").split("\t")
    tolerated[name] = (a, b)
failed = {}
for line in open(sys.argv[1]):
    name, path, expr = line.rstrip("\n").split("\t", 2)
    try:
        text = open(path).read()
        j = json.loads(text, parse_constant=strict)
        if re.search(r"\bnan\b", text, re.IGNORECASE):
            failed[name] = "summary.json contains nan"
        elif not eval(expr, {"j": j}):
            failed[name] = f"summary.json fails: {expr}"
    except Exception as e:
        failed[name] = f"summary.json: {type(e).__name__}: {e} (checking {expr})"
for name, (a, b) in tolerated.items():
    if name in failed:
        continue
    try:
        ja, jb = (norm(json.load(open(d + "/summary.json"))) for d in (a, b))
        if ja != jb:
            keys = sorted(k for k in set(ja) | set(jb) if ja.get(k) != jb.get(k))
            failed[name] = f"summary.json numbers differ from the reference: {keys}"
        elif table(a + "/trajectory.tsv") != table(b + "/trajectory.tsv"):
            failed[name] = "trajectory.tsv numbers differ from the reference"
    except Exception as e:
        failed[name] = f"comparison: {type(e).__name__}: {e}"
for name, why in failed.items():
    print(f"{'defect' if name in tolerated else 'pass'}\t{name}\t{why}")
PY
then
  fail post_checks "python3 failed"
fi
while IFS=$'\t' read -r kind name why; do
  if [ "$kind" = defect ]; then
    defects=$((defects - 1))
  else
    passes=$((passes - 1))
  fi
  fail "$name" "$why"
done <"$work/post.fail"

if [ "$defects" -gt 0 ]; then
  echo "known defects: $defects cases (the # DEFECT: switches at the top)"
fi
echo "catalogue: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
