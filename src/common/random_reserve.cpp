#include "common/random_reserve.h"

#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <new>

namespace tent {

namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kMaxTake = 256;

// All of it on one page that the kernel zeroes in a forked child: the child
// finds it empty and unlocked, whatever its parent's threads were doing.
struct Reserve {
    std::atomic<bool> locked;
    std::uint32_t left;  // unused bytes, at the end of `bytes`
    std::uint8_t bytes[kPage - 16];
};
static_assert(sizeof(Reserve) <= kPage);
static_assert(std::atomic<bool>::is_always_lock_free);

Reserve* make_reserve() {
    void* page = ::mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return nullptr;
    if (::madvise(page, kPage, MADV_WIPEONFORK) != 0) {
        ::munmap(page, kPage);
        return nullptr;
    }
    (void)::madvise(page, kPage, MADV_DONTDUMP);
    // A zeroed page is an empty, unlocked reserve (as in a forked child).
    return new (page) Reserve{};
}

// Bounded: getrandom() of a page is short only when a signal interrupts it.
bool refill(Reserve& r) {
    for (int attempt = 0; attempt < 4; ++attempt) {
        const ssize_t n = ::getrandom(r.bytes, sizeof r.bytes, 0);
        if (n >= static_cast<ssize_t>(kMaxTake)) {
            // What it drew sits at the start; the unused bytes are taken from the end.
            std::memmove(r.bytes + sizeof r.bytes - static_cast<std::size_t>(n), r.bytes, static_cast<std::size_t>(n));
            r.left = static_cast<std::uint32_t>(n);
            return true;
        }
        if (n < 0 && errno != EINTR) return false;
    }
    return false;
}

} // namespace

bool take_reserved_random(std::span<std::uint8_t> out) {
    if (out.empty()) return true;
    if (out.size() > kMaxTake) return false;
    // Made once; never unmapped (a page for the process's lifetime).
    static Reserve* const reserve = make_reserve();
    if (!reserve) return false;
    Reserve& r = *reserve;
    // The critical section is a copy, or a refill once per page: a spin is
    // shorter than a futex would be.
    while (r.locked.exchange(true, std::memory_order_acquire))
        while (r.locked.load(std::memory_order_relaxed)) {
        }
    bool ok = r.left >= out.size() || refill(r);
    if (ok) {
        std::uint8_t* from = r.bytes + sizeof r.bytes - r.left;
        std::memcpy(out.data(), from, out.size());
        std::memset(from, 0, out.size());  // nobody's bytes but the caller's
        r.left -= static_cast<std::uint32_t>(out.size());
    }
    r.locked.store(false, std::memory_order_release);
    return ok;
}

} // namespace tent
