"""carve.rewriters: pure source analysis and transformation (libcst, never torch).

Importing this package is cheap: submodules that need libcst import it
themselves, so `carve.rewriters.rules` can be read by the runtime and the
linter's reporters without pulling in libcst.
"""
