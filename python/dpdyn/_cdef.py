"""The cffi declarations of the package, generated from the library's public headers.

The package runs cffi in ABI mode: its declarations must match the headers exactly (a struct's
fields, their types and their order make its layout). Rather than a copy kept by hand, they are
extracted from include/dpdyn/*.h when the library is first loaded: the declarations named in
DECLARATIONS are taken, in the headers' order, with comments, preprocessor lines, DPD_API,
`extern "C"` and attributes removed. A header that renames or removes one of them makes
`generate` fail with the name; a changed struct is picked up as it is.
tests/test_cdef.py compiles the result against the headers (cffi's API mode checks every
struct's size and every field's offset with the C compiler).

Usage (also as a script, to look at the result):
    python3 python/dpdyn/_cdef.py [INCLUDE_DIR]
"""
import os
import re

# The headers read, in dependency order, and the declarations the package uses from them (a
# typedef, struct, enum or function name).
HEADERS = ("status.h", "isa.h", "keys.h", "model.h", "pld.h", "rdp.h", "account.h", "schedule.h",
           "replicate.h", "dpsgd.h")
DECLARATIONS = (
    # status.h
    "dpd_err", "dpd_version", "dpd_status_str",
    # isa.h
    "dpd_isa", "dpd_isa_get", "dpd_isa_best", "dpd_isa_name", "dpd_isa_env_check",
    # keys.h
    "dpd_key_kind", "dpd_key_desc", "dpd_keys", "dpd_key_desc_applies", "dpd_keys_free",
    "dpd_keys_count", "dpd_keys_desc_get", "dpd_keys_find", "dpd_keys_text_get", "dpd_keys_set",
    "dpd_keys_bytes_get", "dpd_key_desc_allowed",
    # model.h
    "dpd_table", "dpd_output", "dpd_output_free", "dpd_output_params_set",
    "dpd_output_summary_print", "dpd_run_progress_fn", "dpd_run_env", "dpd_run_env_default",
    "dpd_run_progress_flag", "dpd_model_command", "dpd_model_type", "dpd_model_common_keys",
    "dpd_model_at", "dpd_model_lookup", "dpd_model_command_get", "dpd_model_list",
    "dpd_model_command_list", "dpd_model_keys_create", "dpd_model_find", "dpd_model_find_keyed", "dpd_model_key_known",
    "dpd_model_key_set", "dpd_model_run",
    # pld.h (the accountant's privacy loss distributions)
    "dpd_pld", "dpd_neighbours", "dpd_sampling", "dpd_pld_step", "dpd_pld_gaussian",
    "dpd_pld_subsampled_gaussian", "dpd_pld_step_create", "dpd_pld_epsilon_estimate",
    "dpd_pld_compose_self", "dpd_pld_compose", "dpd_pld_delta", "dpd_pld_epsilon", "dpd_pld_h",
    "dpd_pld_points", "dpd_pld_free",
    # rdp.h
    "dpd_rdp_orders_default", "dpd_rdp_gaussian", "dpd_rdp_subsampled_gaussian",
    "dpd_rdp_compose", "dpd_rdp_epsilon", "dpd_rdp_epsilon_classic", "dpd_rdp_delta",
    "dpd_rdp_subsampled_gaussian_epsilon",
    # account.h
    "dpd_mechanism", "dpd_account_segment", "dpd_account", "dpd_account_result",
    "dpd_mechanism_name", "dpd_sampling_name", "dpd_neighbours_name", "dpd_account_check",
    "dpd_account_pld", "dpd_account_epsilon", "dpd_account_delta", "dpd_account_curve",
    "dpd_account_sigma_for", "dpd_account_steps_for",
    # schedule.h, replicate.h (types the trainer's config uses), dpsgd.h (the DP-SGD trainer)
    "dpd_schedule_kind", "dpd_schedule_config", "dpd_schedule", "dpd_schedule_config_default",
    "dpd_schedule_create", "dpd_schedule_free", "dpd_progress_fn",
    "dpd_dpsgd_loss", "dpd_dpsgd_sampling", "dpd_dpsgd_loss_name", "dpd_dpsgd_sampling_name",
    "dpd_dpsgd_config", "dpd_dpsgd_config_default", "dpd_dpsgd_check", "dpd_dpsgd_steps",
    "dpd_dpsgd_account_of", "dpd_dpsgd_calibrate", "dpd_dpsgd_model", "dpd_dpsgd_train",
    "dpd_dpsgd_model_free", "dpd_dpsgd_evaluate", "dpd_dpsgd_predict",
)
# Declared here, not taken from the headers: types of other libraries the headers use (only
# through pointers) and the C library's free (for strings the library returns).
PRELUDE = "typedef struct cJSON cJSON;\nvoid free(void *ptr);\n"


class HeaderError(OSError):
    """A declaration the package needs is missing from the headers, or cannot be read."""


def _preprocess(text):
    """The header's text with comments removed and its conditionals resolved as a C compiler
    that is neither C++ nor GNU C and does not build the library would: the C++ wrapper, the
    GNU attributes and the library's export attribute go; include guards stay true."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"\\\n", " ", text)  # continued lines (multi-line macros) become one line
    out, stack = [], []  # stack: whether each enclosing #if branch is kept
    for line in text.split("\n"):
        s = line.strip()
        if s.startswith("#"):
            d = re.match(r"#\s*(\w+)\s*(.*)", s)
            word, arg = (d.group(1), d.group(2)) if d else ("", "")
            if word in ("if", "ifdef", "ifndef"):
                dropped = ("__cplusplus" in arg or "__GNUC__" in arg or
                           "DPD_BUILDING_LIBRARY" in arg)
                keep = not dropped if word != "ifndef" else True
                stack.append(keep)
            elif word in ("elif", "else") and stack:
                stack[-1] = not stack[-1] and word == "else"
            elif word == "endif" and stack:
                stack.pop()
            continue  # #define, #include, #pragma: not declarations
        if all(stack):
            out.append(line)
    return "\n".join(out)


def _statements(text):
    """Top-level declarations: split at ';' outside braces and parentheses."""
    depth, start, out = 0, 0, []
    for i, ch in enumerate(text):
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        elif ch == ";" and depth == 0:
            out.append(text[start:i])
            start = i + 1
    return [" ".join(s.split()) for s in out if s.strip()]


def _strip_attributes(s):
    """Removes DPD_API and every __attribute__((...)) (balanced parentheses)."""
    s = re.sub(r"\bDPD_API\b", "", s)
    while True:
        m = re.search(r"__attribute__\s*\(", s)
        if not m:
            break
        i, depth = m.end() - 1, 0
        for j in range(i, len(s)):
            depth += {"(": 1, ")": -1}.get(s[j], 0)
            if depth == 0:
                break
        s = s[:m.start()] + s[j + 1:]
    return " ".join(s.split())


def _names(stmt):
    """The names a declaration declares (typedef names, struct tags, a function's name)."""
    names = set()
    body_free = re.sub(r"\{.*\}", "{}", stmt)  # members are not declared names
    m = re.match(r"typedef\s+(struct|enum|union)\s+(\w+)?\s*(\{\})?\s*(\w+)$", body_free)
    if m:
        names.update(n for n in (m.group(2), m.group(4)) if n)
        return names
    m = re.match(r"typedef\s.*\(\s*\*\s*(\w+)\s*\)\s*\(.*\)$", body_free)  # function pointer
    if m:
        return {m.group(1)}
    m = re.match(r"(struct|enum|union)\s+(\w+)\s*\{\}$", body_free)  # struct tag { ... }
    if m:
        return {m.group(2)}
    m = re.match(r"[^(]*?\b(\w+)\s*\(", body_free)  # a function: the name before '('
    if m and not body_free.startswith("typedef"):
        return {m.group(1)}
    return names


def generate(include_dir, declarations=DECLARATIONS, headers=HEADERS):
    """The cdef text for cffi: PRELUDE, then every declaration of `declarations` found in
    include_dir/dpdyn/<headers>, in the headers' order. Raises HeaderError naming what is
    missing."""
    wanted, found, out = set(declarations), set(), [PRELUDE]
    for h in headers:
        path = os.path.join(include_dir, "dpdyn", h)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise HeaderError("cannot read the header %s: %s" % (path, e)) from e
        for stmt in _statements(_preprocess(text)):
            stmt = _strip_attributes(stmt)
            names = _names(stmt)
            if names & wanted:
                out.append(stmt + ";")
                found |= names & wanted
    missing = [n for n in declarations if n not in found]
    if missing:
        raise HeaderError("declarations not found in %s/dpdyn/{%s}: %s" %
                          (include_dir, ",".join(headers), ", ".join(missing)))
    return "\n".join(out) + "\n"


def include_dirs(library_path=None):
    """Where the headers are looked for, first match wins: the environment variable
    DPDYN_INCLUDE; the source tree this package sits in (<repository>/include); the prefix of
    the library loaded from a path (<prefix>/lib/libdpdyn.so -> <prefix>/include)."""
    out = []
    env = os.environ.get("DPDYN_INCLUDE")
    if env:
        out.append(env)
    here = os.path.dirname(os.path.abspath(__file__))
    out.append(os.path.join(os.path.dirname(os.path.dirname(here)), "include"))
    if library_path and os.sep in library_path:
        libdir = os.path.dirname(os.path.abspath(library_path))
        for up in ("..", os.path.join("..", "..")):  # lib/ or lib/<multiarch>/
            out.append(os.path.normpath(os.path.join(libdir, up, "include")))
    return out


def find_include_dir(library_path=None):
    """The first of include_dirs() that holds dpdyn/model.h; HeaderError listing the places
    tried otherwise."""
    tried = include_dirs(library_path)
    for d in tried:
        if os.path.isfile(os.path.join(d, "dpdyn", "model.h")):
            return d
    raise HeaderError("the headers dpdyn/*.h were not found (set DPDYN_INCLUDE to the folder "
                      "that holds dpdyn/; tried: %s)" % ", ".join(tried))


if __name__ == "__main__":
    import sys
    print(generate(sys.argv[1] if len(sys.argv) > 1 else find_include_dir()), end="")
