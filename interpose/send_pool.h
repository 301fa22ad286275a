// Registered buffers for the messages the interposer sends over tent: tent's
// verbs rails send only from memory registered with the engine, and a
// program's send may be gathered from several SGEs plus a header. Buffers
// come in power-of-two sizes, are registered once and reused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "tent/tent.h"

namespace tent::interpose {

struct PooledBuffer {
    std::unique_ptr<std::uint8_t[]> data;
    std::size_t capacity = 0;
    tent_mem_t* mem = nullptr;
};

class SendPool {
public:
    explicit SendPool(tent_engine_t* engine) : engine_(engine) {}
    // A registered buffer of at least length bytes; empty data on failure.
    PooledBuffer acquire(std::size_t length);
    void release(PooledBuffer buffer);

private:
    static constexpr int kClasses = 32;
    static std::size_t class_of(std::size_t length);
    tent_engine_t* engine_;
    std::mutex mu_;
    std::vector<PooledBuffer> free_[kClasses];
};

} // namespace tent::interpose
