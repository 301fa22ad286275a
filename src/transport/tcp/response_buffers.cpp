#include "transport/tcp/response_buffers.h"

#include <utility>

namespace tent::tcp {

std::vector<std::uint8_t> ResponseBuffers::take(std::size_t capacity) {
    {
        std::lock_guard lock(mutex_);
        // The smallest kept buffer that fits: large ones stay for large reads.
        std::size_t best = kept_.size();
        for (std::size_t i = 0; i < kept_.size(); ++i)
            if (kept_[i].capacity() >= capacity &&
                (best == kept_.size() || kept_[i].capacity() < kept_[best].capacity()))
                best = i;
        if (best != kept_.size()) {
            std::vector<std::uint8_t> out = std::move(kept_[best]);
            kept_[best] = std::move(kept_.back());
            kept_.pop_back();
            kept_bytes_ -= out.capacity();
            return out;
        }
    }
    std::vector<std::uint8_t> out;
    out.reserve(capacity);
    return out;
}

void ResponseBuffers::give(std::vector<std::uint8_t> buffer) {
    const std::size_t capacity = buffer.capacity();
    if (capacity < kMinKeptCapacity) return;
    buffer.clear();
    std::lock_guard lock(mutex_);
    if (kept_bytes_ + capacity > kMaxKeptBytes) return;  // freed on the way out
    kept_bytes_ += capacity;
    kept_.push_back(std::move(buffer));
}

} // namespace tent::tcp
