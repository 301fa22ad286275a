// What every fuzz target shares: the libFuzzer entry point's declaration and
// fuzz_require, the oracle that turns a broken promise of a decoder (not
// only a crash) into a finding. Both builds see the same failure: libFuzzer
// saves the input that aborted, the corpus driver names the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

inline void fuzz_require(bool holds, const char* promise) {
    if (holds) return;
    std::fprintf(stderr, "fuzz: broken promise: %s\n", promise);
    std::abort();
}
