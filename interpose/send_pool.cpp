#include "send_pool.h"

#include "activation.h"

namespace tent::interpose {

std::size_t SendPool::class_of(std::size_t length) {
    std::size_t c = 12;  // 4 KiB at least
    while ((std::size_t{1} << c) < length && c + 1 < kClasses) ++c;
    return c;
}

PooledBuffer SendPool::acquire(std::size_t length) {
    std::size_t c = class_of(length);
    if ((std::size_t{1} << c) < length) return {};
    {
        std::lock_guard lock(mu_);
        if (!free_[c].empty()) {
            PooledBuffer b = std::move(free_[c].back());
            free_[c].pop_back();
            return b;
        }
    }
    PooledBuffer b;
    b.capacity = std::size_t{1} << c;
    b.data = std::make_unique<std::uint8_t[]>(b.capacity);
    TentScope scope;
    if (tent_mem_register(engine_, b.data.get(), b.capacity, TENT_ACCESS_LOCAL_WRITE, &b.mem) != TENT_OK) return {};
    return b;
}

void SendPool::release(PooledBuffer buffer) {
    if (!buffer.data) return;
    std::size_t c = class_of(buffer.capacity);
    std::lock_guard lock(mu_);
    free_[c].push_back(std::move(buffer));
}

} // namespace tent::interpose
