// Appends fixed-width little-endian integers and byte strings to a buffer.
// Every frame is serialised field by field through this class, never by
// copying a struct, so padding and host byte order never reach the wire.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/little_endian.h"

namespace tent::wire {

class ByteWriter {
public:
    explicit ByteWriter(std::vector<uint8_t>& out) : out_(out) {}

    void u8(uint8_t v) { out_.push_back(v); }
    void u16(uint16_t v) { put(v, 2); }
    void u32(uint32_t v) { put(v, 4); }
    void u64(uint64_t v) { put(v, 8); }
    void bytes(std::span<const uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }

    size_t size() const { return out_.size(); }
    // Overwrites a u32 written earlier (lengths known only after the body).
    void patch_u32(size_t offset, uint32_t v) {
        store_le<uint32_t>(out_.data() + offset, v);
    }

private:
    void put(uint64_t v, int n) {
        uint8_t le[8];
        store_le(le, v, static_cast<size_t>(n));
        out_.insert(out_.end(), le, le + n);
    }

    std::vector<uint8_t>& out_;
};

} // namespace tent::wire
