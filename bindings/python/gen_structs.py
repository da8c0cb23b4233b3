#!/usr/bin/env python3
"""Generate tfjob/_structs.py, the ctypes mirrors of the structs of libtfjob's public headers.

Reads include/tfjob/*.h and include/tfjob/sys/*.h (no compiler needed) and writes one
ctypes.Structure per `typedef struct NAME { ... } NAME;`, one CFUNCTYPE per function-pointer
typedef, and the constants used as array lengths. The headers declare their structs with plain
C: scalars, enums, pointers, function pointers and fixed arrays; anything else stops the
generator with an error naming the header and the declaration, so that a new kind of member is
mapped on purpose rather than guessed.

    python3 bindings/python/gen_structs.py            # rewrite tfjob/_structs.py
    python3 bindings/python/gen_structs.py --check    # exit 1 when it is out of date

tests/test_structs.py checks the output against the C compiler's sizeof/offsetof and that the
committed file is what this script writes.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Dict, List, NamedTuple, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_INCLUDE = os.path.join(HERE, "..", "..", "include")
DEFAULT_OUTPUT = os.path.join(HERE, "tfjob", "_structs.py")

SCALARS = {
    "unsigned int": "ctypes.c_uint", "int": "ctypes.c_int", "unsigned": "ctypes.c_uint",
    "long": "ctypes.c_long", "unsigned long": "ctypes.c_ulong", "short": "ctypes.c_short",
    "unsigned short": "ctypes.c_ushort", "char": "ctypes.c_char", "unsigned char": "ctypes.c_ubyte",
    "int8_t": "ctypes.c_int8", "uint8_t": "ctypes.c_uint8", "int16_t": "ctypes.c_int16",
    "uint16_t": "ctypes.c_uint16", "int32_t": "ctypes.c_int32", "uint32_t": "ctypes.c_uint32",
    "int64_t": "ctypes.c_int64", "uint64_t": "ctypes.c_uint64", "size_t": "ctypes.c_size_t",
    "double": "ctypes.c_double", "float": "ctypes.c_float", "bool": "ctypes.c_bool",
}

FUNCTION_POINTER = re.compile(r"^(?P<ret>.+?)\(\s*\*\s*(?P<name>\w+)\s*\)\s*\((?P<args>.*)\)$", re.S)
STRUCT_BODY = re.compile(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", re.S)
ENUM_BODY = re.compile(r"typedef\s+enum\s+\w*\s*\{(.*?)\}\s*(\w+)\s*;", re.S)
OPAQUE = re.compile(r"typedef\s+struct\s+\w+\s+(\w+)\s*;")
FUNCTION_TYPEDEF = re.compile(r"typedef\s+([^;{}]*?\(\s*\*\s*\w+\s*\)\s*\([^;{}]*\))\s*;", re.S)
DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)\s+(-?\d+)\s*$", re.M)
ENUM_CONSTANT = re.compile(r"(\w+)\s*=\s*(-?\d+)")
ARRAY = re.compile(r"^(?P<decl>.*?)\[\s*(?P<length>\w+)\s*\]$")


class GenError(Exception):
    pass


class Struct(NamedTuple):
    c_name: str
    header: str
    members: List[str]


class Headers:
    """What the generator knows after reading the headers: structs, enums, opaque types,
    function-pointer typedefs and integer constants, in header order."""

    def __init__(self) -> None:
        self.structs: List[Struct] = []
        self.enums: set = set()
        self.opaque: set = set()
        self.callbacks: List[Tuple[str, str, str]] = []  # (name, declaration, header)
        self.constants: Dict[str, int] = {}


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def split_top_level(text: str, separator: str) -> List[str]:
    """Split on separator outside parentheses (function-pointer parameter lists)."""
    parts, depth, current = [], 0, []
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == separator and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [" ".join(p.split()) for p in parts if p.strip()]


def header_paths(include: str) -> List[str]:
    paths = []
    for sub in ("tfjob", os.path.join("tfjob", "sys")):
        folder = os.path.join(include, sub)
        paths += sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".h"))
    return paths


def read_headers(include: str) -> Headers:
    known = Headers()
    for path in header_paths(include):
        rel = os.path.relpath(path, include).replace(os.sep, "/")
        with open(path, encoding="utf-8") as f:
            raw = f.read()
        text = strip_comments(raw)
        known.constants.update((n, int(v)) for n, v in DEFINE.findall(text))
        for body, name in ENUM_BODY.findall(text):
            known.enums.add(name)
            known.constants.update((n, int(v)) for n, v in ENUM_CONSTANT.findall(body))
        known.opaque.update(OPAQUE.findall(text))
        for decl in FUNCTION_TYPEDEF.findall(text):
            decl = " ".join(decl.split())
            match = FUNCTION_POINTER.match(decl)
            if match:
                known.callbacks.append((match.group("name"), decl, rel))
        for tag, body, name in STRUCT_BODY.findall(text):
            if tag != name:
                raise GenError(f"{rel}: struct {tag} is typedef'd as {name}; the generator expects one name")
            known.structs.append(Struct(name, rel, split_top_level(body, ";")))
    known.opaque -= {s.c_name for s in known.structs}
    return known


def python_name(c_name: str) -> str:
    """tfjob_render_options -> RenderOptions; tfjob_clock_cb -> CLOCK_CB."""
    bare = c_name[len("tfjob_"):] if c_name.startswith("tfjob_") else c_name
    if bare.endswith("_cb"):
        return bare.upper()
    return "".join(part.capitalize() for part in bare.split("_"))


def split_declarator(decl: str) -> Tuple[str, str]:
    """'const char *name' -> ('const char *', 'name')."""
    match = re.match(r"^(?P<type>.*?[\s*])(?P<name>\w+)$", decl)
    if not match or not match.group("type").strip():
        raise GenError(f"cannot split '{decl}' into a type and a name")
    return match.group("type"), match.group("name")


class Mapper:
    """C type text -> the ctypes expression for it (as Python source)."""

    def __init__(self, known: Headers) -> None:
        self.known = known
        self.struct_names = {s.c_name for s in known.structs}
        self.callback_names = {name for name, _, _ in known.callbacks}
        self.lengths: Dict[str, int] = {}  # Python name -> value of the constants used as array lengths

    def ctype(self, c_type: str, where: str) -> Optional[str]:
        """where: "field", "arg" or "ret" (a callback's return value: pointers are c_void_p there,
        because a ctypes callback cannot hand a c_char_p it owns back to C)."""
        is_const = re.search(r"\bconst\b", c_type) is not None
        stars = c_type.count("*")
        base = " ".join(re.sub(r"\bconst\b", " ", c_type).replace("*", " ").split())
        if stars == 0:
            return self.value_type(base, c_type)
        if stars >= 2 or base == "void" or base in self.known.opaque or where == "ret":
            return "ctypes.c_void_p" if stars == 1 else "ctypes.POINTER(ctypes.c_void_p)"
        if base == "char":
            # const char * is a string; char * is a buffer C writes into, passed as its address.
            return "ctypes.c_char_p" if is_const else "ctypes.c_void_p"
        target = self.value_type(base, c_type)
        return f"ctypes.POINTER({target})"

    def value_type(self, base: str, c_type: str) -> Optional[str]:
        if base == "void":
            return None
        if base in SCALARS:
            return SCALARS[base]
        if base in self.known.enums:
            return "ctypes.c_int"
        if base in self.struct_names or base in self.callback_names:
            return python_name(base)
        raise GenError(f"no ctypes mapping for the C type '{c_type}'")

    def function(self, decl: str) -> str:
        match = FUNCTION_POINTER.match(decl)
        if not match:
            raise GenError(f"not a function pointer: '{decl}'")
        ret = self.ctype(match.group("ret").strip(), "ret")
        args = []
        for param in split_top_level(match.group("args"), ","):
            if param == "void":
                continue
            args.append(self.ctype(split_declarator(param)[0], "arg"))
        return "ctypes.CFUNCTYPE(" + ", ".join([ret or "None"] + [a or "None" for a in args]) + ")"

    def member(self, struct: Struct, decl: str) -> Tuple[str, str]:
        """One struct member -> (name, ctypes expression)."""
        try:
            pointer = FUNCTION_POINTER.match(decl)
            if pointer:
                return pointer.group("name"), self.function(decl)
            array = ARRAY.match(decl)
            if array:
                c_type, name = split_declarator(array.group("decl"))
                return name, f"{self.ctype(c_type, 'field')} * {self.array_length(array.group('length'))}"
            c_type, name = split_declarator(decl)
            expr = self.ctype(c_type, "field")
            if expr is None:
                raise GenError(f"a member of type void: '{decl}'")
            return name, expr
        except GenError as exc:
            raise GenError(f"{struct.header}: {struct.c_name}: {exc}") from None

    def array_length(self, length: str) -> str:
        if length.isdigit():
            return length
        if length not in self.known.constants:
            raise GenError(f"unknown array length '{length}'")
        name = length[len("TFJOB_"):] if length.startswith("TFJOB_") else length
        self.lengths[name] = self.known.constants[length]
        return name


def render(known: Headers) -> str:
    mapper = Mapper(known)
    out = [
        '"""ctypes mirrors of the structs of libtfjob\'s public headers.',
        "",
        "GENERATED by bindings/python/gen_structs.py from include/tfjob/*.h: do not edit; run",
        "`python3 bindings/python/gen_structs.py` after changing a header. tests/test_structs.py checks",
        "every size and offset against the C compiler and that this file is up to date.",
        '"""',
        "import ctypes",
        "",
    ]
    fields = [[mapper.member(s, m) for m in s.members] for s in known.structs]
    out += [f"{name} = {value}" for name, value in sorted(mapper.lengths.items())]
    out.append("")
    for s in known.structs:
        out += ["", f"class {python_name(s.c_name)}(ctypes.Structure):",
                f'    """{s.c_name} (include/{s.header})."""', ""]
    out.append("")
    for name, decl, header in known.callbacks:
        out.append(f"{python_name(name)} = {mapper.function(decl)}  # {name} (include/{header})")
    for s, members in zip(known.structs, fields):
        out += ["", f"{python_name(s.c_name)}._fields_ = ["]
        out += [f'    ("{name}", {expr}),' for name, expr in members]
        out.append("]")
    out += ["", "# C name -> class, for the layout test.", "STRUCTS = {"]
    out += [f'    "{s.c_name}": {python_name(s.c_name)},' for s in known.structs]
    out.append("}")
    return "\n".join(out) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--include", default=DEFAULT_INCLUDE, help="the folder holding tfjob/*.h")
    parser.add_argument("--output", default=DEFAULT_OUTPUT, help="the file to write ('-': stdout)")
    parser.add_argument("--check", action="store_true", help="compare with --output instead of writing it")
    args = parser.parse_args(argv)
    try:
        text = render(read_headers(args.include))
    except (GenError, OSError) as exc:
        print(f"gen_structs: {exc}", file=sys.stderr)
        return 2
    if args.check:
        with open(args.output, encoding="utf-8") as f:
            if f.read() != text:
                print(f"gen_structs: {args.output} is out of date: run bindings/python/gen_structs.py",
                      file=sys.stderr)
                return 1
        return 0
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
