// Reads fixed-width little-endian integers and byte strings from untrusted
// input. Every read is bounds-checked; the first short read makes the reader
// fail for good and remembers which field ran out, at which offset, so a
// decoder can report a precise reason and never reads past the end.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "common/little_endian.h"

namespace tent::wire {

class ByteReader {
public:
    explicit ByteReader(std::span<const uint8_t> in) : in_(in) {}

    bool u8(uint8_t& v, const char* field) {
        uint64_t x;
        if (!get(x, 1, field)) return false;
        v = static_cast<uint8_t>(x);
        return true;
    }
    bool u16(uint16_t& v, const char* field) {
        uint64_t x;
        if (!get(x, 2, field)) return false;
        v = static_cast<uint16_t>(x);
        return true;
    }
    bool u32(uint32_t& v, const char* field) {
        uint64_t x;
        if (!get(x, 4, field)) return false;
        v = static_cast<uint32_t>(x);
        return true;
    }
    bool u64(uint64_t& v, const char* field) { return get(v, 8, field); }
    // A view of the next n bytes (valid as long as the input is).
    bool bytes(std::span<const uint8_t>& out, size_t n, const char* field) {
        if (!have(n, field)) return false;
        out = in_.subspan(pos_, n);
        pos_ += n;
        return true;
    }

    bool ok() const { return error_.empty(); }
    size_t offset() const { return pos_; }
    size_t remaining() const { return in_.size() - pos_; }
    // Why the reader failed, e.g. "rkey needs 4 bytes at offset 12, 2 left".
    const std::string& error() const { return error_; }

private:
    // Every field of every frame passes here: the check is inline, the
    // message (a short read, untrusted input) is built out of line.
    bool have(size_t n, const char* field) {
        if (ok() && n <= remaining()) [[likely]]
            return true;
        if (ok()) short_read(n, field);
        return false;
    }
    [[gnu::cold, gnu::noinline]] void short_read(size_t n, const char* field) {
        error_ = std::string(field) + " needs " + std::to_string(n) + " bytes at offset " +
                 std::to_string(pos_) + ", " + std::to_string(remaining()) + " left";
    }
    bool get(uint64_t& v, size_t n, const char* field) {
        if (!have(n, field)) return false;
        v = load_le(in_.data() + pos_, n);
        pos_ += n;
        return true;
    }

    std::span<const uint8_t> in_;
    size_t pos_ = 0;
    std::string error_;
};

} // namespace tent::wire
