// ResponseBuffers: the byte buffers a TCP target copies read data into
// (TcpRail::handle_read_request), kept for the next response once the
// socket has taken them. A read's data is copied because the region is the
// target application's, which may be freed before the socket takes the
// bytes; a fresh buffer for each response then cost more than the copy:
// glibc hands memory above its mmap and trim thresholds back to the system
// and the next response faults every page in again. tent-bench reading
// 1 MiB over two loopback TCP rails in 256 KiB chunks, 8 in flight, moved
// 2.5 to 9.8 Gbit/s so, and 30 to 33 with those pages kept.
//
// Shared by the rails of a provider (one pool however many peers) and
// bounded: at most kMaxKeptBytes are kept; a buffer is kept only when it is
// at least kMinKeptCapacity (smaller ones cost malloc little).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace tent::tcp {

class ResponseBuffers {
public:
    static constexpr std::size_t kMinKeptCapacity = 64 * 1024;
    static constexpr std::size_t kMaxKeptBytes = 16 * 1024 * 1024;

    // An empty buffer with room for at least `capacity` bytes: a kept one
    // when one is large enough, else a new one.
    std::vector<std::uint8_t> take(std::size_t capacity);
    // A buffer the socket has taken (its contents are dropped). Kept while
    // the bound allows, else freed.
    void give(std::vector<std::uint8_t> buffer);

private:
    std::mutex mutex_;
    std::vector<std::vector<std::uint8_t>> kept_;
    std::size_t kept_bytes_ = 0;
};

} // namespace tent::tcp
