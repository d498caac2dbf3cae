"""Programs that code checks run inside the verification sandbox with `python3 -I -c`.

Each file is self-contained and uses only the standard library, so that it runs on any python3 in
any sandbox image; checks read them with `benchyard.checks.code_support.script`.
"""
