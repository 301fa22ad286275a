#!/bin/sh
# Exits 0 when the build tree ($TEST_BUILDDIR) was built with
# AddressSanitizer (libtent imports its runtime's __asan_init), 1 otherwise.
# Programs that are not instrumented (Debian's, Open MPI's) cannot load such
# a tree's libraries: the runtime must come first (README, "Sanitizers").
readelf --dyn-syms -W "${TEST_BUILDDIR:-.}/.libs/libtent.so.0" 2>/dev/null | grep -q ' UND __asan_init'
