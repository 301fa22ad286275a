#include "engine/op_pool.h"

#include <utility>

#include "common/sanitizers.h"
#include "engine/op.h"

namespace tent {

OpPool::OpPool() = default;
OpPool::~OpPool() = default;

std::unique_ptr<Op> OpPool::take() {
    if (!kAddressSanitizer) {
        std::lock_guard lock(mutex_);
        if (!spare_.empty()) {
            std::unique_ptr<Op> op = std::move(spare_.back());
            spare_.pop_back();
            return op;
        }
    }
    return std::make_unique<Op>();
}

void OpPool::give_back(std::unique_ptr<Op> op) {
    if (!op || kAddressSanitizer) return;  // common/sanitizers.h
    // Every field back to its default; the lists keep their capacity.
    auto chunks = std::move(op->chunks);
    auto pieces = std::move(op->pieces);
    auto headers = std::move(op->headers);
    auto rkeys = std::move(op->remote.rkeys);
    chunks.clear();
    pieces.clear();
    headers.clear();
    rkeys.clear();
    *op = Op{};
    op->chunks = std::move(chunks);
    op->pieces = std::move(pieces);
    op->headers = std::move(headers);
    op->remote.rkeys = std::move(rkeys);
    std::lock_guard lock(mutex_);
    if (spare_.size() < kKept) spare_.push_back(std::move(op));
}

} // namespace tent
