# tests/simverbs tools: simverbs-ctl and simverbs-run.
