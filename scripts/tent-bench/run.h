// The two roles of tent-bench: each returns the process exit status.
#ifndef TENT_BENCH_RUN_H
#define TENT_BENCH_RUN_H

#include <cstdint>

#include "tent-bench/options.h"

namespace tent_bench {

int run_server(const Options& o);
int run_client(const Options& o);

// What the client tells the server before the run.
struct RunParams {
    std::uint64_t magic = 0;
    std::uint32_t op = 0;
    std::uint32_t depth = 0;
    std::uint64_t size = 0;
    std::uint64_t check = 0;
    // The background stream's slots follow the measured stream's in the
    // server's region (background_depth 0: no background stream).
    std::uint32_t background_op = 0;
    std::uint32_t background_depth = 0;
    std::uint64_t background_size = 0;
};
constexpr std::uint64_t kMagic = 0x32484342544e4554ull;  // "TENTBCH2"
constexpr std::uint64_t kNoSeq = ~0ull;
// RunParams::check: 1 --check, kVerifyWrites --verify-writes (write_check.h).
constexpr std::uint64_t kVerifyWrites = 2;

} // namespace tent_bench

#endif
