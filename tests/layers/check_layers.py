#!/usr/bin/env python3
"""The layers of lib/ (docs/architecture.md), checked from the #include lines and the calls.

Each folder of lib/ is a layer and may include the private headers of its own folder and of the
layers it sits on (ALLOWED), never of a layer above or beside it; the folders' include graph has
no cycle; public headers (include/tfjob/) include only public headers; programs (src/) and the
bindings include only public headers and their own. Calls obey the same order: a function
named tfjob_* or tfjob__* that one layer defines (not static) is called only from that layer and
the layers above it, so a helper declared low but defined high is caught too. Prints one line per
violation and "N passed, N failed"; exit status 1 when anything is wrong.
"""
import os
import re
import sys

# Bottom to top. A layer may include the layers listed for it (and itself), nothing else.
ALLOWED = {
    "util": [],
    "parse": ["util"],
    "core": ["util", "parse"],
    "graph": ["util", "parse", "core"],
    "plan": ["util", "parse", "core", "graph"],
    "transport": ["util", "parse", "core"],
    "controller": ["util", "parse", "core", "graph", "plan", "transport"],
    "local": ["util", "parse", "core", "graph", "plan", "transport"],
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# A function definition starts a line: return type words, the name, "(", and later "{" before
# any ";". Definitions marked static are file-local and not counted.
DEFINITION = re.compile(r'^(?!static\b)[A-Za-z_][\w \t\*]*?\b(tfjob_\w+)\s*\([^;{]*\)\s*(?:__attribute__\s*\(\([^;{]*\)\)\s*)?\{',
                        re.M)
CALL = re.compile(r'\b(tfjob_\w+)\s*\(')
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"', re.S)


def sources(top):
    for root, _, files in os.walk(top):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.join(root, f)


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return INCLUDE.findall(f.read())


def code_of(path):
    """The file's text without comments and string literals (a name in either is no call)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return COMMENT.sub(lambda m: '""' if m.group(0).startswith('"') else " ", f.read())


def check_calls(lib, root):
    """(problems, checked) for calls between layers; see the module's docstring."""
    defined_in, code = {}, {}
    for path in sources(lib):
        layer = lib_layer_of(path, lib)
        if layer not in ALLOWED or not path.endswith(".c"):
            continue
        code[path] = code_of(path)
        for name in DEFINITION.findall(code[path]):
            defined_in.setdefault(name, layer)
    problems, checked = [], 0
    for path, text in code.items():
        own = lib_layer_of(path, lib)
        seen = set()
        for name in CALL.findall(text):
            layer = defined_in.get(name)
            if layer is None or layer == own or name in seen:
                continue
            seen.add(name)
            checked += 1
            if layer not in ALLOWED[own]:
                problems.append(f"{os.path.relpath(path, root)}: calls {name}() of lib/{layer}/: "
                                f"lib/{own}/ must not call up or beside it")
    return problems, checked


def lib_layer_of(path, lib):
    rel = os.path.relpath(path, lib)
    return rel.split(os.sep)[0] if os.sep in rel else None


def included_layer(inc, own):
    """The layer an include line names: "core/job.h" -> core; "step.h" -> the file's own."""
    if inc.startswith("tfjob/"):
        return "public"
    return inc.split("/")[0] if "/" in inc else own


def find_cycle(edges):
    state = {}

    def visit(n, stack):
        state[n] = "open"
        for m in sorted(edges.get(n, ())):
            if state.get(m) == "open":
                return stack + [n, m]
            if m not in state:
                found = visit(m, stack + [n])
                if found:
                    return found
        state[n] = "done"
        return None

    for n in sorted(edges):
        if n not in state:
            found = visit(n, [])
            if found:
                return found
    return None


def main(root):
    lib = os.path.join(root, "lib")
    problems, checked = [], 0
    edges = {}
    for path in sources(lib):
        own = lib_layer_of(path, lib)
        rel = os.path.relpath(path, root)
        if own is None:
            problems.append(f"{rel}: a source file at the top of lib/ belongs to no layer")
            continue
        if own not in ALLOWED:
            problems.append(f"{rel}: lib/{own}/ is not a known layer (add it to ALLOWED and docs/architecture.md)")
            continue
        for inc in includes(path):
            checked += 1
            layer = included_layer(inc, own)
            if layer in ("public", own):
                continue
            if layer.startswith(".."):
                problems.append(f"{rel}: #include \"{inc}\": name headers by their layer, not by a relative path")
                continue
            edges.setdefault(own, set()).add(layer)
            if layer not in ALLOWED[own]:
                where = "above" if layer in ALLOWED and own in ALLOWED[layer] else "beside or above"
                problems.append(f"{rel}: #include \"{inc}\": lib/{own}/ must not include lib/{layer}/ ({where} it)")
    call_problems, call_checked = check_calls(lib, root)
    problems += call_problems
    checked += call_checked
    cycle = find_cycle(edges)
    if cycle:
        problems.append("include cycle between folders: " + " -> ".join(cycle))
    for top, what in (("include/tfjob", "a public header"), ("src", "a program"), ("bindings", "a binding")):
        for path in sources(os.path.join(root, top)):
            for inc in includes(path):
                checked += 1
                first = inc.split("/")[0]
                if first in ALLOWED:
                    problems.append(f"{os.path.relpath(path, root)}: #include \"{inc}\": {what} "
                                    "may include only public headers (include/tfjob/)")
    for p in problems:
        print("FAIL:", p)
    print(f"{checked - len(problems)} passed, {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")))
