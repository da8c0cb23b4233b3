"""What the binding writes by hand against what the library says: the error codes of errors.py
must be the library's codes, each under the library's own name, so that a code added to
include/tfjob/error.h cannot go unnoticed."""
from tfjob import _lib, errors

# The library numbers its codes -1, -2, ... with no gaps (error.h: never renumbered).
LAST_CHECKED = -200


def library_codes() -> dict:
    """name -> code for every code the library names (tfjob_error_code_name)."""
    out = {}
    for code in range(-1, LAST_CHECKED, -1):
        name = _lib.decode(_lib.tfjob_error_code_name(code))
        if name != "TFJOB_UNKNOWN":
            out[name] = code
    return out


def test_library_names_its_codes():
    codes = library_codes()
    assert codes["TFJOB_EPARSE"] == -5 and len(codes) >= 20
    assert _lib.decode(_lib.tfjob_error_code_name(LAST_CHECKED)) == "TFJOB_UNKNOWN"


def test_every_library_code_has_its_python_constant():
    for name, code in library_codes().items():
        short = name[len("TFJOB_"):]
        if short == "ERROR":
            continue  # -1, the catch-all: tfjob.Error's default code
        assert getattr(errors, short, None) == code, f"errors.{short} should be {code} ({name})"


def test_every_python_constant_is_a_library_code():
    codes = library_codes()
    for short in dir(errors):
        if short.startswith("E") and short.isupper() and isinstance(getattr(errors, short), int):
            assert codes.get("TFJOB_" + short) == getattr(errors, short), f"errors.{short} is not the library's"

