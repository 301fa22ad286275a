// Requests' Op records, kept when they finish for the next requests: a
// request then allocates nothing for its record once as many have been in
// flight, and its lists (chunks, pieces, headers, remote keys) keep their
// room (not under AddressSanitizer: common/sanitizers.h). Posting threads
// take, the driver gives back: under its own lock.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace tent {

struct Op;

class OpPool {
public:
    OpPool();
    ~OpPool();  // where Op is complete
    OpPool(const OpPool&) = delete;
    OpPool& operator=(const OpPool&) = delete;

    // A record with every field at its default.
    std::unique_ptr<Op> take();
    // A finished request's record, cleared here (outside the lock).
    void give_back(std::unique_ptr<Op> op);

private:
    static constexpr std::size_t kKept = 1024;
    std::mutex mutex_;
    std::vector<std::unique_ptr<Op>> spare_;
};

} // namespace tent
