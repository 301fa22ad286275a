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

// Writes: a pattern made 8 bytes at a time, cheap enough to fill and check
// every byte of every write (--verify-writes): word k of key mixes both.
inline std::uint64_t pattern_word(std::uint64_t key, std::uint64_t k) {
    std::uint64_t x = (key + 1) * 0x9e3779b97f4a7c15ull ^ (k + 1) * 0xd1b54a32d192ed03ull;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    return x ^ (x >> 32);
}

// from: a multiple of 8.
inline void fill_words(std::uint8_t* p, std::size_t n, std::uint64_t key, std::size_t from = 0) {
    for (std::size_t i = from; i < n; i += 8) {
        const std::uint64_t w = pattern_word(key, i / 8);
        std::memcpy(p + i, &w, n - i < 8 ? n - i : 8);
    }
}

// Index of the first byte that differs from fill_words' pattern, or n.
inline std::size_t find_word_mismatch(const std::uint8_t* p, std::size_t n, std::uint64_t key, std::size_t from = 0) {
    for (std::size_t i = from; i < n; i += 8) {
        const std::uint64_t w = pattern_word(key, i / 8);
        const std::size_t len = n - i < 8 ? n - i : 8;
        if (std::memcmp(p + i, &w, len) != 0) {
            const auto* e = reinterpret_cast<const std::uint8_t*>(&w);
            for (std::size_t j = 0; j < len; ++j)
                if (p[i + j] != e[j]) return i + j;
        }
    }
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
