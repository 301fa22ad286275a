#include "transport/tcp/atomic_ledger.h"

namespace tent::tcp {

std::uint64_t AtomicLedger::execute(std::uint64_t connection, std::uint64_t id, std::uint64_t* word,
                                    wire::AtomicOp op, std::uint64_t operand, std::uint64_t swap) {
    std::lock_guard lock(mutex_);
    Book& book = books_[connection];
    if (auto it = book.results.find(id); it != book.results.end()) return it->second;
    std::uint64_t original;
    // Sequentially consistent, like the HCA's: the program's own CPU
    // atomics on the word see these in one order.
    if (op == wire::AtomicOp::CompareSwap) {
        original = operand;
        __atomic_compare_exchange_n(word, &original, swap, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    } else {
        original = __atomic_fetch_add(word, operand, __ATOMIC_SEQ_CST);
    }
    book.results.emplace(id, original);
    book.order.push_back(id);
    if (book.order.size() > kCapacity) {
        book.results.erase(book.order.front());
        book.order.pop_front();
    }
    return original;
}

void AtomicLedger::join(std::uint64_t connection) {
    std::lock_guard lock(mutex_);
    ++books_[connection].rails;
}

void AtomicLedger::leave(std::uint64_t connection) {
    std::lock_guard lock(mutex_);
    auto it = books_.find(connection);
    if (it == books_.end()) return;
    if (it->second.rails > 0) --it->second.rails;
    if (it->second.rails == 0) books_.erase(it);
}

std::size_t AtomicLedger::connections() {
    std::lock_guard lock(mutex_);
    return books_.size();
}

} // namespace tent::tcp
