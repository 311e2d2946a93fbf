#!/usr/bin/env bash
# --help and behaviour agree: for every command of every model, each key whose `--help` line
# shows a default `[VALUE]` is accepted when omitted, and a run that omits it records VALUE as
# the value in effect (summary.json "params", or for a derived default such as delta [1/n] the
# number it stands for). A key whose help shows a default the run does not take, or a default the
# run refuses (nc refused --epsilon without --delta while its help showed delta [1/n]), fails.
# usage: test_help_defaults.sh DPDYN_BINARY SOURCE_DIR
set -u
dpdyn=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
export OMP_WAIT_POLICY=passive

# MODEL COMMAND BASE-ARGS: each base omits every key that has a default, except the sizes that
# keep the run short (those are then not checked: they were given), and sets a privacy budget
# where a key's default only applies with one (delta).
cat >"$work/cases" <<'CASES'
linreg simulate --d=5 --n=20
linreg sde --d=5 --n=20
linreg ode --d=5 --n=20
linreg compare --d=5 --n=20 --seeds=8 --plot=0
linreg account --d=5 --n=20 --c=1 --rho=1
linreg tune --d=5 --n=20 --heatmap=0 --confirm_seeds=0 --plot=0
rf simulate --d=5 --n=20 --p=30 --n_test=10 --steps=5
rf ou --d=5 --n=20 --p=30 --n_test=10 --steps=5
rf compare --d=5 --n=20 --p=30 --n_test=10 --steps=5 --plot=0
rf account --eta=0.1 --steps=10 --epsilon=1
nc simulate --K=3 --p=8 --n=30 --n_test=30 --epsilon=1
nc compare --K=3 --p=8 --n=30 --n_test=30 --epsilon=1 --plot=0
nc account --K=3 --p=8 --n=30 --epsilon=1
nc diagnose --K=3 --p=8 --n=30
semipriv simulate --d=20 --n=50 --n_public=200 --n_test=100 --seeds=2
semipriv compare --d=20 --n=50 --n_public=200 --n_test=100 --seeds=2 --plot=0
semipriv account --d=20 --n=50
CASES

i=0
while read -r model cmd base; do
  i=$((i + 1))
  out=$work/run$i
  # shellcheck disable=SC2086 # the base arguments are words
  if ! "$dpdyn" "$cmd" --model="$model" --help >"$work/help$i" 2>&1; then
    bad "$model $cmd: --help failed"
    continue
  fi
  # shellcheck disable=SC2086
  if ! "$dpdyn" "$cmd" --model="$model" $base --out="$out" >/dev/null 2>"$work/err$i"; then
    bad "$model $cmd: the run with every default key omitted failed: $(head -c 300 "$work/err$i")"
    continue
  fi
  if python3 - "$work/help$i" "$out/summary.json" "$base" >"$work/check$i" 2>"$work/check$i.absent" <<'PY'; then
import glob, json, os, re, shutil, sys

help_text = open(sys.argv[1]).read().splitlines()
j = json.load(open(sys.argv[2]))
given = set(re.findall(r"--([a-z_0-9]+)=", sys.argv[3]))
params = j.get("params", {})
nonfinite = j.get("nonfinite", {})
privacy = j.get("privacy", {})

def num(s):
    try:
        return float(s)
    except ValueError:
        return None

def value_of(key):
    if key in params and params[key] is None and nonfinite.get("params." + key) is not None:
        return nonfinite["params." + key]
    return params.get(key, "<absent>")

# Defaults the help states as a formula: how to check them.
def derived(key, default, text):
    n = params.get("n")
    if default == "1/p":
        got, p = params.get(key), params.get("p")
        return got is not None and p and abs(got - 1.0 / p) <= 1e-15, f"{key} {got}, 1/p = {1.0 / p if p else None}"
    if "at most one per step" in text and num(default) is not None:
        got, steps = params.get(key), params.get("steps")
        want = min(num(default), steps + 1) if steps is not None else None
        return got == want, f"{key} {got}, min({default}, steps + 1) = {want}"
    if default == "1/n":
        got = privacy.get("delta", params.get("delta"))
        return got is not None and n and abs(got - 1.0 / n) <= 1e-15, f"delta {got}, 1/n = {1.0 / n if n else None}"
    if default == "n^2":
        got = j.get("steps", params.get("steps"))
        return got == n * n, f"steps {got}, n^2 = {n * n if n else None}"
    if default.startswith("law: gamma0 (1 - xi0 - 0.1 gamma0)"):
        g, x, z = j.get("gamma0"), j.get("xi0"), j.get("zeta")
        want = g * (1 - x - 0.1 * g) if g is not None and x is not None else None
        return z is not None and want is not None and abs(z - want) <= 1e-12 * abs(want), f"zeta {z}, formula {want}"
    if key == "plot":  # not a parameter: the figure is drawn (where gnuplot is) or not
        figures = glob.glob(os.path.join(os.path.dirname(sys.argv[2]), "*.png"))
        if default == "0":
            return not figures, f"figures {figures}"
        return bool(figures) or shutil.which("gnuplot") is None, f"figures {figures}"
    return None, "no rule"

# tune replaces the keys it tunes by their optimum: those are not the defaults in effect
tuned = set(j.get("tuned", []))

fails, checked = [], 0
for line in help_text:
    m = re.match(r"^  ([a-z_][a-z_0-9]*) +(.*)$", line)
    if not m:
        continue
    key, text = m.groups()
    defaults = re.findall(r"\[([^\]\[]*)\]", text)
    if not defaults or key in given or key in ("model", "out") or key in tuned:
        continue
    default = defaults[-1] if text.rstrip().endswith("]") else defaults[0]
    ok, why = derived(key, default, text)
    if ok is None:
        got = value_of(key)
        if isinstance(got, str) and got == "<absent>":
            # absent: only a key not in effect for this run (its flag gets a no-effect note)
            print(f"ABSENT\t{key}\t{default}", file=sys.stderr)
            continue
        elif num(default) is not None and isinstance(got, (int, float)) and not isinstance(got, bool):
            ok, why = abs(got - num(default)) <= 1e-12 * max(1.0, abs(num(default))), f"params {got}"
        elif isinstance(got, list):
            ok, why = ",".join(f"{v:g}" for v in got) == default, f"params {got}"
        else:
            ok, why = str(got) == default, f"params {got!r}"
    checked += 1
    if not ok:
        fails.append(f"{key} [{default}]: {why}")
print(f"{checked} defaults" + ("; " + "; ".join(fails) if fails else ""))
sys.exit(1 if fails else 0)
PY
    # the keys absent from params: given as --KEY=DEFAULT they must be reported as without
    # effect (a note), else the run ignored a key that is in effect
    absent_ok=1
    while IFS=$'\t' read -r tag key default; do
      [ "$tag" = ABSENT ] || continue
      # shellcheck disable=SC2086
      "$dpdyn" "$cmd" --model="$model" $base "--$key=$default" --out="$out-$key" >/dev/null 2>"$work/note"
      if ! grep -q "note:.*'*$key" "$work/note"; then
        absent_ok=0
        bad "$model $cmd: $key [$default] is not in summary.json params, yet --$key=$default has effect: $(head -c 200 "$work/note")"
      fi
    done <"$work/check$i.absent"
    [ "$absent_ok" = 1 ] && ok "$model $cmd: $(cat "$work/check$i")"
  else
    bad "$model $cmd: $(cat "$work/check$i")"
  fi
done <"$work/cases"

finish help_defaults
