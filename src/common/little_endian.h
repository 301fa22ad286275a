// Integers stored little-endian in byte buffers: tent's frames, message
// headers and rail framing are little-endian whatever the host is. One
// load or store on a little-endian host, a byte loop elsewhere.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tent {

// The low n bytes (n <= 8) of v at `at`.
inline void store_le(std::uint8_t* at, std::uint64_t v, std::size_t n) {
    if constexpr (std::endian::native == std::endian::little) {
        std::memcpy(at, &v, n);
    } else {
        for (std::size_t i = 0; i < n; ++i) at[i] = static_cast<std::uint8_t>(v >> (8 * i));
    }
}

// n bytes (n <= 8) at `at`, zero-extended.
inline std::uint64_t load_le(const std::uint8_t* at, std::size_t n) {
    std::uint64_t v = 0;
    if constexpr (std::endian::native == std::endian::little) {
        std::memcpy(&v, at, n);
    } else {
        for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t{at[i]} << (8 * i);
    }
    return v;
}

template <typename T>
void store_le(std::uint8_t* at, T v) {
    store_le(at, static_cast<std::uint64_t>(v), sizeof(T));
}

template <typename T>
T load_le(const std::uint8_t* at) {
    return static_cast<T>(load_le(at, sizeof(T)));
}

} // namespace tent
