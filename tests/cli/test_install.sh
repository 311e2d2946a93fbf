#!/usr/bin/env bash
# The installed tree: install into a temporary prefix, then
#  - a small program using the public API builds with `pkg-config --cflags --libs dpdyn` (the
#    .pc file finds the prefix by itself), and again after the whole tree is moved elsewhere;
#  - the same program builds with a CMake project that calls find_package(dpdyn);
#  - the man page renders (skipped with a message without man or help2man);
#  - the bash completion completes commands, --model= values and a command's keys.
# usage: test_install.sh DPDYN_BINARY SOURCE_DIR
set -u
. "$2/tests/cli/lib.sh"
build=$(dirname "$1")
prefix=$work/prefix
src=$work/src
mkdir -p "$src"
if ! cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1; then
  cat "$work/install.log"
  bad "cmake --install"
  finish install
  exit 1
fi
pc=$(find "$prefix" -name dpdyn.pc | head -n 1)
cat >"$src/user.c" <<'C'
#include <math.h>
#include <stdio.h>
#include <dpdyn/dpd.h>
int main(void) {
  dpd_err err;
  double eps = 0.0;
  if (dpd_privacy_eps_tight(0.5, 1e-5, &eps, &err) != DPD_OK) {
    fprintf(stderr, "%s\n", err.reason);
    return 1;
  }
  printf("dpdyn %s: eps_tight(0.5, 1e-5) = %.6f, mu_c(1, 0.5) = %.6f\n", dpd_version(), eps,
         dpd_clip_mu_eval(1.0, 0.5));
  if (fabs(eps - 4.728387) >= 1e-5) {
    return 1;
  }
  /* the registry: rf's account with mu = 1 reports zCDP 1/2 */
  {
    const dpd_model_type *m = dpd_model_lookup("rf");
    dpd_keys *keys;
    dpd_output *out;
    dpd_run_env env = dpd_run_env_default();
    const cJSON *privacy;
    if (m == NULL || dpd_model_keys_create(m, "account", &keys, &err) != DPD_OK ||
        dpd_keys_set(keys, "mu", "1", &err) != DPD_OK ||
        dpd_model_run(m, "account", keys, &env, &out, &err) != DPD_OK) {
      fprintf(stderr, "registry: %s\n", err.reason);
      return 1;
    }
    privacy = cJSON_GetObjectItemCaseSensitive(out->summary, "privacy");
    printf("rf account mu = 1: zcdp = %g\n",
           cJSON_GetObjectItemCaseSensitive(privacy, "zcdp")->valuedouble);
    if (cJSON_GetObjectItemCaseSensitive(privacy, "zcdp")->valuedouble != 0.5) {
      return 1;
    }
    dpd_output_free(out);
    dpd_keys_free(keys);
  }
  return 0;
}
C

# run_user NAME EXE [LIBDIR]: the program must print its two lines and exit 0.
run_user() {
  local name=$1 exe=$2 libdir=${3:-}
  if LD_LIBRARY_PATH=$libdir "$exe" >"$work/user.out" 2>&1 &&
    grep -q '^dpdyn .*: eps_tight' "$work/user.out" && grep -q '^rf account mu = 1: zcdp = 0.5$' "$work/user.out"; then
    ok "$name: $(head -n 1 "$work/user.out")"
  else
    bad "$name: $(cat "$work/user.out")"
  fi
}

# 1. pkg-config, with no --define-variable: the prefix comes from the .pc file's location.
if [ -z "$pc" ]; then
  bad "no dpdyn.pc under the prefix"
elif ! grep -q '^prefix=${pcfiledir}/' "$pc"; then
  bad "dpdyn.pc: $(grep '^prefix=' "$pc") (not relative to the file)"
else
  pcdir=$(dirname "$pc")
  libdir=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir dpdyn)
  if flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs dpdyn) &&
    cc -std=c11 -Wall -Wextra -Werror "$src/user.c" -o "$work/user_pc" $flags -lm 2>"$work/cc.log"; then
    run_user "pkg-config" "$work/user_pc" "$libdir"
  else
    bad "pkg-config build: $(cat "$work/cc.log")"
  fi
  # Requires.private names packages that pkg-config knows (else --cflags would fail above), and
  # --static lists the private libraries.
  static=$(PKG_CONFIG_PATH=$pcdir pkg-config --static --libs dpdyn 2>&1)
  if [[ " $static " == *" -lfftw3 "* && " $static " == *" -lsleef "* && " $static " == *" -lgsl "* &&
    " $static " == *" -lsundials_cvode "* ]]; then
    ok "pkg-config --static: dependencies listed"
  else
    bad "pkg-config --static --libs: $static"
  fi
  # moved tree: the same .pc file (now elsewhere) still gives working flags
  mv "$prefix" "$work/moved"
  pcdir=$work/moved/${pcdir#"$prefix"/}
  libdir=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir dpdyn)
  if flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs dpdyn) &&
    cc -std=c11 -Wall -Wextra -Werror "$src/user.c" -o "$work/user_moved" $flags -lm 2>"$work/cc.log"; then
    run_user "pkg-config, tree moved" "$work/user_moved" "$libdir"
  else
    bad "pkg-config build after moving the tree: $(cat "$work/cc.log")"
  fi
  mv "$work/moved" "$prefix"
fi

# 2. CMake: find_package(dpdyn) and the imported target dpdyn::dpdyn.
cat >"$src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.18)
project(dpdyn_user LANGUAGES C)
find_package(dpdyn 0.1 REQUIRED)
add_executable(user user.c)
target_compile_options(user PRIVATE -Wall -Wextra -Werror)
target_link_libraries(user PRIVATE dpdyn::dpdyn m)
CMAKE
if cmake -S "$src" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  >"$work/cmake.log" 2>&1 && cmake --build "$work/cmake-build" >>"$work/cmake.log" 2>&1; then
  run_user "find_package(dpdyn)" "$work/cmake-build/user"
else
  bad "find_package(dpdyn) project: $(tail -n 20 "$work/cmake.log")"
fi

# 3. The man page.
man1=$(find "$prefix" -path '*/man1/dpdyn.1' | head -n 1)
if ! command -v man >/dev/null 2>&1; then
  echo "skip man page: man is not installed"
elif [ -z "$man1" ]; then
  # the build makes the man page when its configuration found help2man
  if grep -Eq '^HELP2MAN_EXECUTABLE:FILEPATH=.*help2man$' "$build/CMakeCache.txt" 2>/dev/null; then
    bad "the build found help2man but installed no man1/dpdyn.1"
  else
    echo "skip man page: help2man was not found when the build was configured (Debian: help2man)"
  fi
elif MANWIDTH=80 man -l "$man1" >"$work/man.txt" 2>"$work/man.err" &&
  grep -q '^NAME' "$work/man.txt" && grep -q 'simulate' "$work/man.txt" &&
  grep -q 'SEE ALSO' "$work/man.txt"; then
  ok "man page renders ($(wc -l <"$work/man.txt") lines)"
else
  bad "man -l $man1: $(head -n 5 "$work/man.err")"
fi

# 4. Bash completion, called as bash calls it (COMP_WORDS, COMP_CWORD).
comp=$prefix/share/bash-completion/completions/dpdyn
complete_words() {
  bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _dpdyn
           echo "${COMPREPLY[*]}"' _ "$comp" "$prefix/bin/dpdyn" "$@" 2>&1
}
check_completion() {
  local want=$1 got
  shift
  got=$(complete_words "$@")
  if [ "$got" = "$want" ]; then
    ok "completion 'dpdyn $*<TAB>': $got"
  else
    bad "completion 'dpdyn $*<TAB>': '$got', expected '$want'"
  fi
}
if [ ! -f "$comp" ]; then
  bad "no completion script at share/bash-completion/completions/dpdyn"
else
  check_completion "simulate" si
  check_completion "--model=linreg --model=rf --model=nc --model=semipriv --model=privacy" simulate --model=
  check_completion "rf" simulate --model = r # '=' split off, as bash's COMP_WORDBREAKS does
  check_completion "--seeds= --seed=" simulate --se
  check_completion "--n_test=" simulate --model=rf --n_
  check_completion "--schedule=const --schedule=cosine" ode --schedule=c
fi

test -x "$prefix/bin/dpdyn" && ok "bin/dpdyn installed" || bad "no bin/dpdyn"
# 5. The executable links the shared library (the CLI uses only the public API) and finds the
# installed one beside it (bin/../lib), also once the tree is moved.
for tree in "$prefix" "$work/moved"; do
  [ "$tree" = "$work/moved" ] && mv "$prefix" "$tree"
  lib=$(env -u LD_LIBRARY_PATH ldd "$tree/bin/dpdyn" 2>&1 | awk '$1 ~ /^libdpdyn\.so/ {print $3}')
  installed=$(find "$tree" -name 'libdpdyn.so.*' -type f | head -n 1)
  if env -u LD_LIBRARY_PATH "$tree/bin/dpdyn" --version >"$work/version.out" 2>&1 &&
    [ -n "$lib" ] && [ -n "$installed" ] &&
    [ "$(cd "$(dirname "$lib")" && pwd -P)" = "$(cd "$(dirname "$installed")" && pwd -P)" ]; then
    ok "bin/dpdyn runs on the installed libdpdyn ($lib)"
  else
    bad "bin/dpdyn in $tree: libdpdyn '$lib'; $(head -n 2 "$work/version.out")"
  fi
done
mv "$work/moved" "$prefix"
test -f "$prefix/share/dpdyn/models/linreg/quickstart.ini" && ok "models installed" ||
  bad "no share/dpdyn/models/linreg/quickstart.ini"
finish install
