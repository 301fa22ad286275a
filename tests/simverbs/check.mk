# tests/simverbs checks: unmodified ibverbs-utils and perftest on simverbs.
