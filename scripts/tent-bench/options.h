// tent-bench command line: what to run, against whom, and how to report.
#ifndef TENT_BENCH_OPTIONS_H
#define TENT_BENCH_OPTIONS_H

#include <tent/tent.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tent_bench {

enum class Op : std::uint32_t { Write = 0, Read = 1, Send = 2 };

constexpr std::uint32_t kMaxDepth = 4096;  // operations in flight per stream

const char* op_name(Op op);

struct Options {
    bool listen = false;          // server (--listen) or client (--connect)
    std::string host;
    std::uint16_t port = 0;
    Op op = Op::Write;
    std::uint64_t size = 65536;
    std::uint64_t iters = 0;      // 0: run for duration_secs
    double duration_secs = 0;
    std::uint32_t depth = 8;      // operations in flight
    std::vector<std::string> rails;  // "tcp", "tcp:ADDR", device names
    tent_priority_t priority = TENT_PRIORITY_MEDIUM;
    tent_transport_t hint = TENT_TRANSPORT_ANY;
    bool check = false;
    bool verify_writes = false;  // --verify-writes: every write checked at its target (implies check)
    // Every operation of the measured stream uses the same local and remote
    // buffer, as ib_write_bw does above 2 KiB: the data then stays in cache.
    bool reuse_buffer = false;
    bool json = false;
    std::string config;           // --config FILE
    // A second stream in the same process, on the same engines, that runs
    // while the measured one does (e.g. low-priority bulk writes under
    // high-priority sends). Not measured into the main figures.
    bool background = false;
    Op background_op = Op::Write;  // write or read
    std::uint64_t background_size = 1u << 20;
    std::uint32_t background_depth = 8;
    tent_priority_t background_priority = TENT_PRIORITY_LOW;
    std::uint32_t stats_interval_ms = 0;  // 0: no periodic rail lines
};

// Parses argv; on error or --help returns false with the text to print in
// message and exit_code set (0 for --help).
bool parse_options(int argc, char** argv, Options& out, std::string& message, int& exit_code);

} // namespace tent_bench

#endif
