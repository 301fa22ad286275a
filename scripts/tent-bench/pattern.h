// The bytes tent-bench moves when --check is on: a pattern that differs by
// key (slot or message sequence) and by offset, so that misplaced, stale,
// duplicated or reordered data does not compare equal.
#ifndef TENT_BENCH_PATTERN_H
#define TENT_BENCH_PATTERN_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tent_bench {

inline std::uint8_t pattern_byte(std::uint64_t key, std::size_t i) {
    std::uint32_t x = static_cast<std::uint32_t>(i) * 2654435761u ^ static_cast<std::uint32_t>(key * 40503u + 17);
    return static_cast<std::uint8_t>((x >> 11) ^ (x >> 24) ^ (i >> 20));
}

inline void fill_pattern(std::uint8_t* p, std::size_t n, std::uint64_t key, std::size_t from = 0) {
    for (std::size_t i = from; i < n; ++i) p[i] = pattern_byte(key, i);
}

// Index of the first byte that differs from the pattern, or n.
inline std::size_t find_mismatch(const std::uint8_t* p, std::size_t n, std::uint64_t key, std::size_t from = 0) {
    for (std::size_t i = from; i < n; ++i)
        if (p[i] != pattern_byte(key, i)) return i;
    return n;
}

// The first min(8, n) bytes carry a sequence number (little endian,
// truncated when n < 8).
inline void stamp_seq(std::uint8_t* p, std::size_t n, std::uint64_t seq) {
    for (std::size_t i = 0; i < n && i < 8; ++i) p[i] = static_cast<std::uint8_t>(seq >> (8 * i));
}

inline bool seq_matches(const std::uint8_t* p, std::size_t n, std::uint64_t seq) {
    for (std::size_t i = 0; i < n && i < 8; ++i)
        if (p[i] != static_cast<std::uint8_t>(seq >> (8 * i))) return false;
    return true;
}

inline std::uint64_t read_seq(const std::uint8_t* p, std::size_t n) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n && i < 8; ++i) v |= std::uint64_t(p[i]) << (8 * i);
    return v;
}

} // namespace tent_bench

#endif
