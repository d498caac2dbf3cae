"""Run pytest with JUnit XML: the `tests` check's runner for `framework: pytest`.

Usage: python3 -I -c <this file> JUNIT_XML

pytest is imported before the working directory is on sys.path (and `-I` leaves out the user site
in the workdir), so that a `pytest.py` of the repository cannot stand in for it; then the working
directory goes first on sys.path, as `python3 -m pytest` does. Prints `benchyard: ready` first, or
`benchyard: cannot run: <why>` when the sandbox's python3 has no pytest.
"""

from __future__ import annotations

import os
import sys

READY = b"benchyard: ready\n"
CANNOT_RUN = b"benchyard: cannot run: "


def main(argv: list[str]) -> int:
    (junit_path,) = argv
    try:
        import pytest
    except ImportError as error:
        os.write(1, CANNOT_RUN + f"pytest is not installed for python3 ({error})\n".encode())
        return 4
    os.write(1, READY)
    sys.path.insert(0, os.getcwd())
    arguments = ["-q", "-rA", "-p", "no:cacheprovider", f"--junitxml={junit_path}"]
    return int(pytest.main(arguments))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
