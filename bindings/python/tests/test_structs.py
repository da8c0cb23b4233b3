"""The generated ctypes structs (tfjob/_structs.py) against the C headers: every size, offset and
member size as the C compiler sees them, and the committed file as gen_structs.py writes it."""
import ctypes
import importlib.util
import os
import shutil
import subprocess

import pytest

from tfjob import _structs

BINDING = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
INCLUDE = os.path.join(BINDING, "..", "..", "include")
GENERATOR = os.path.join(BINDING, "gen_structs.py")
COMMITTED = os.path.join(BINDING, "tfjob", "_structs.py")


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_structs", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def layout_program() -> str:
    """C source printing "struct size", then "struct.member offset size" for every mirrored member."""
    lines = ["#include <stddef.h>", "#include <stdio.h>", "#include <tfjob/tfjob.h>",
             "#include <tfjob/sys/transport.h>",
             "#define MEMBER(T, m) printf(#T \".\" #m \" %zu %zu\\n\", offsetof(T, m), sizeof(((T *)0)->m))",
             "int main(void) {"]
    for c_name, cls in _structs.STRUCTS.items():
        lines.append(f'\tprintf("{c_name} %zu\\n", sizeof({c_name}));')
        lines += [f"\tMEMBER({c_name}, {field[0]});" for field in cls._fields_]
    lines += ["\treturn 0;", "}"]
    return "\n".join(lines) + "\n"


def python_layout() -> list:
    out = []
    for c_name, cls in _structs.STRUCTS.items():
        out.append(f"{c_name} {ctypes.sizeof(cls)}")
        for name, ctype in (f[:2] for f in cls._fields_):
            out.append(f"{c_name}.{name} {getattr(cls, name).offset} {ctypes.sizeof(ctype)}")
    return out


@pytest.fixture(scope="module")
def c_layout(tmp_path_factory) -> list:
    cc = os.environ.get("CC", "cc")
    if not shutil.which(cc):
        pytest.skip(f"no C compiler ({cc}) to check the struct layout with")
    folder = tmp_path_factory.mktemp("layout")
    source, program = folder / "layout.c", folder / "layout"
    source.write_text(layout_program())
    subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-I", INCLUDE, "-o", str(program), str(source)], check=True)
    return subprocess.run([str(program)], capture_output=True, text=True, check=True).stdout.splitlines()


def test_every_struct_of_the_headers_is_mirrored():
    known = load_generator().read_headers(INCLUDE)
    assert sorted(s.c_name for s in known.structs) == sorted(_structs.STRUCTS)
    assert len(_structs.STRUCTS) >= 17


def test_sizes_offsets_and_member_sizes_match_c(c_layout):
    assert python_layout() == c_layout


def test_committed_structs_are_up_to_date():
    gen = load_generator()
    with open(COMMITTED, encoding="utf-8") as f:
        committed = f.read()
    assert committed == gen.render(gen.read_headers(INCLUDE)), \
        "tfjob/_structs.py is out of date: run python3 bindings/python/gen_structs.py"


def test_a_field_appended_to_a_header_reaches_the_generated_struct(tmp_path):
    """What the up-to-date test relies on: a new member in a header changes the output."""
    copy = tmp_path / "include"
    shutil.copytree(INCLUDE, copy)
    header = copy / "tfjob" / "validate.h"
    text = header.read_text()
    anchor = "\tconst tfjob_job *old;"
    assert anchor in text
    header.write_text(text.replace(anchor, anchor + "\n\tint new_flag_for_the_test;", 1))
    gen = load_generator()
    changed = gen.render(gen.read_headers(str(copy)))
    assert '("new_flag_for_the_test", ctypes.c_int)' in changed
    assert changed != gen.render(gen.read_headers(INCLUDE))


def test_an_unknown_member_type_stops_the_generator(tmp_path):
    copy = tmp_path / "include"
    shutil.copytree(INCLUDE, copy)
    header = copy / "tfjob" / "validate.h"
    anchor = "\tconst tfjob_job *old;"
    header.write_text(header.read_text().replace(anchor, anchor + "\n\tlong double x;", 1))
    gen = load_generator()
    with pytest.raises(gen.GenError, match="tfjob_validate_options.*long double"):
        gen.render(gen.read_headers(str(copy)))
