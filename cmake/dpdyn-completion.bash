# bash completion for dpdyn (installed as share/bash-completion/completions/dpdyn).
# SPDX-License-Identifier: MIT
#
# Completes the commands, `--model=` values, the keys of `dpdyn COMMAND --model=M --help`
# (as --key=), the values of keys whose help lists them (a | b | c), directories for out and
# plot, and INI files. Every list is read at completion time from the help text of the dpdyn
# being completed, so it always matches that executable. Self-contained: needs no helper of
# the bash-completion package, and works whether or not '=' is in COMP_WORDBREAKS.

# _dpdyn_help_section EXE TITLE: the first words of the indented lines under "TITLE:" in
# `EXE --help`, up to the next blank line.
_dpdyn_help_section() {
  "$1" --help 2>/dev/null | awk -v t="$2:" '
    index($0, t) == 1 { on = 1; next }
    on && /^$/ { on = 0 }
    on && /^  [a-z]/ { print $1 }'
}

# _dpdyn_keys EXE COMMAND MODEL: the keys that `EXE COMMAND [--model=MODEL] --help` lists
# (lines with the key at column 3).
_dpdyn_keys() {
  local exe=$1 cmd=$2 model=$3
  if [ -n "$model" ]; then
    "$exe" "$cmd" --model="$model" --help 2>/dev/null
  else
    "$exe" "$cmd" --help 2>/dev/null
  fi | awk '/^  [a-z][a-z0-9_]* / { print $1 }'
}

# _dpdyn_values EXE COMMAND MODEL KEY: the values a key's help lists as "a | b | c" (the words
# before any ':' or '(' of each alternative; file:PATH becomes "file:").
_dpdyn_values() {
  local exe=$1 cmd=$2 model=$3 key=$4
  if [ -n "$model" ]; then
    "$exe" "$cmd" --model="$model" --help 2>/dev/null
  else
    "$exe" "$cmd" --help 2>/dev/null
  fi | awk -v k="$key" '
    $1 == k && /^  [a-z]/ {
      line = $0
      sub(/^  [a-z0-9_]+ +/, "", line)
      sub(/ \[[^]]*\]$/, "", line)          # the default
      if (index(line, " | ") == 0) exit
      sub(/^[^:]*: /, "", line)              # a description before the list
      n = split(line, alt, / \| /)
      for (i = 1; i <= n; i++) {
        v = alt[i]
        sub(/^ +/, "", v)
        if (v ~ /^[a-z0-9_-]+:[A-Z]/) { sub(/:.*/, ":", v) }  # file:PATH, levels:..., student:NU
        else { sub(/[ (].*/, "", v) }
        if (v ~ /^[a-z0-9_.:-]+$/) print v
      }
      exit
    }'
}

_dpdyn() {
  local exe=${COMP_WORDS[0]} cword=$COMP_CWORD
  exe=${exe/#\~/$HOME}
  command -v "$exe" >/dev/null 2>&1 || exe=dpdyn
  COMPREPLY=()

  # The words before the cursor with "--key", "=", "value" pieces joined into one word.
  local -a words=()
  local i w joined_cur="" cur_split=0
  for ((i = 1; i <= cword; i++)); do
    w=${COMP_WORDS[i]}
    if [ "$w" = "=" ] && [ ${#words[@]} -gt 0 ]; then
      words[${#words[@]} - 1]+="="
      [ "$i" -eq "$cword" ] && cur_split=1
    elif [ ${#words[@]} -gt 0 ] && [[ ${words[${#words[@]} - 1]} == *= ]] &&
      [ "${COMP_WORDS[i - 1]}" = "=" ]; then
      words[${#words[@]} - 1]+="$w"
      [ "$i" -eq "$cword" ] && cur_split=1
    else
      words+=("$w")
    fi
  done
  joined_cur=${words[${#words[@]} - 1]}
  [ "$cword" -eq 0 ] && return 0

  # The command (after `sweep`, the swept command) and the model of the words typed so far.
  local cmd="" sub="" model="" n=${#words[@]}
  for ((i = 0; i < n - 1; i++)); do
    w=${words[i]}
    case $w in
      --model=*) model=${w#--model=} ;;
      -*) ;;
      *)
        if [ -z "$cmd" ]; then
          cmd=$w
        elif [ "$cmd" = sweep ] && [ -z "$sub" ]; then
          sub=$w
        elif [ -z "$model" ] && [[ $w == *.ini ]] && [ -r "$w" ]; then
          model=$(sed -n 's/^[[:space:]]*model[[:space:]]*=[[:space:]]*\([a-z]*\).*/\1/p' "$w" | head -n 1)
        fi
        ;;
    esac
  done

  local -a cands=()
  local prefix=""
  if [ -z "$cmd" ]; then
    if [[ $joined_cur == -* ]]; then
      cands=(--help --version)
    else
      mapfile -t cands < <(_dpdyn_help_section "$exe" commands)
    fi
  elif [ "$cmd" = sweep ] && [ -z "$sub" ] && [[ $joined_cur != -* ]]; then
    # "Runs COMMAND (simulate, sde, ... or tune) at every point"
    mapfile -t cands < <("$exe" sweep --help 2>/dev/null |
      sed -n 's/.*COMMAND (\([a-z, ]*\)).*/\1/p' | head -n 1 | sed 's/,/ /g; s/ or / /' | tr -s ' ' '\n')
  elif [ "$cmd" = plot ]; then
    if [[ $joined_cur == --format=* ]]; then
      prefix=--format=
      # "usage: dpdyn plot DIR [--format=png|svg|pdf]"
      mapfile -t cands < <("$exe" plot --help 2>/dev/null |
        sed -n 's/.*--format=\([a-z|]*\).*/\1/p' | head -n 1 | tr '|' '\n')
    elif [[ $joined_cur == -* ]]; then
      cands=(--format= --help)
    else
      mapfile -t COMPREPLY < <(compgen -d -- "$joined_cur")
      return 0
    fi
  elif [[ $joined_cur == --*=* ]]; then
    local key=${joined_cur%%=*} val=${joined_cur#*=}
    key=${key#--}
    prefix="--$key="
    local run=$cmd
    [ "$cmd" = sweep ] && run=$sub
    case $key in
      model) mapfile -t cands < <(_dpdyn_help_section "$exe" "models (key model)") ;;
      out)
        mapfile -t cands < <(compgen -d -- "$val")
        ;;
      *) mapfile -t cands < <(_dpdyn_values "$exe" "$run" "$model" "$key") ;;
    esac
    if [ "$cur_split" -eq 1 ]; then
      prefix=""
    fi
    mapfile -t COMPREPLY < <(compgen -P "$prefix" -W "${cands[*]}" -- "$val")
    # a directory or a value that takes an argument (file:PATH) goes on without a space
    if [ "$key" = out ] || [[ ${COMPREPLY[*]} == *:* ]]; then
      compopt -o nospace 2>/dev/null
    fi
    return 0
  elif [[ $joined_cur == -* ]]; then
    local run=$cmd k
    [ "$cmd" = sweep ] && run=$sub
    for k in $(_dpdyn_keys "$exe" "$run" "$model"); do
      cands+=("--$k=")
    done
    [ "$cmd" = sweep ] && cands+=(--plot_y=)
    cands+=(--help)
    mapfile -t COMPREPLY < <(compgen -W "${cands[*]}" -- "$joined_cur")
    if [ ${#COMPREPLY[@]} -gt 0 ] && [[ ${COMPREPLY[0]} == *= ]]; then
      compopt -o nospace 2>/dev/null
    fi
    return 0
  else
    mapfile -t COMPREPLY < <(compgen -f -X '!*.ini' -- "$joined_cur"; compgen -d -- "$joined_cur")
    return 0
  fi
  local rest=${joined_cur#"$prefix"}
  [ "$cur_split" -eq 1 ] && prefix=""
  mapfile -t COMPREPLY < <(compgen -P "$prefix" -W "${cands[*]}" -- "$rest")
  return 0
}
complete -F _dpdyn dpdyn
