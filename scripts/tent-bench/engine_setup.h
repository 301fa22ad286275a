// Owning handles of the C API and the engine tent-bench runs on.
#ifndef TENT_BENCH_ENGINE_SETUP_H
#define TENT_BENCH_ENGINE_SETUP_H

#include <tent/tent.h>

#include <memory>
#include <string>

#include "tent-bench/options.h"

namespace tent_bench {

struct EngineDeleter {
    void operator()(tent_engine_t* e) const { (void)tent_engine_destroy(e); }
};
struct MemDeleter {
    void operator()(tent_mem_t* m) const { (void)tent_mem_deregister(m); }
};
using EnginePtr = std::unique_ptr<tent_engine_t, EngineDeleter>;
using MemPtr = std::unique_ptr<tent_mem_t, MemDeleter>;

// Creates the engine from the configuration (plus --config). "tcp:ADDR"
// entries of --rails become its TCP rail addresses (tcp_rail_addresses).
bool make_engine(const Options& o, EnginePtr& out, std::string& error);

// Every entry of --rails names at least one rail of the engine: "tcp" a TCP
// rail, a device name a rail whose name contains it.
bool check_rails(const Options& o, tent_engine_t* engine, std::string& error);

} // namespace tent_bench

#endif
