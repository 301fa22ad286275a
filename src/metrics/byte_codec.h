// The primitives of the stats segment's byte formats (stats_codec.h,
// process_stats.h): numbers in host byte order (writer and reader share the
// machine), strings as u16 length + bytes, every read checked against what is left.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace tent {

inline constexpr std::size_t kMaxCodecString = 0xffff;

template <typename T>
void put_bytes(std::string& out, T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Strings longer than 65535 bytes are cut.
inline void put_string(std::string& out, const std::string& s) {
    const std::size_t n = std::min(s.size(), kMaxCodecString);
    put_bytes<std::uint16_t>(out, static_cast<std::uint16_t>(n));
    out.append(s.data(), n);
}

class ByteReader {
public:
    ByteReader(const void* data, std::size_t size) : p_(static_cast<const unsigned char*>(data)), left_(size) {}

    template <typename T>
    [[nodiscard]] bool get(T* v) {
        if (left_ < sizeof(T)) return false;
        std::memcpy(v, p_, sizeof(T));
        p_ += sizeof(T);
        left_ -= sizeof(T);
        return true;
    }
    [[nodiscard]] bool get_str(std::string* s) {
        std::uint16_t n;
        if (!get(&n) || left_ < n) return false;
        s->assign(reinterpret_cast<const char*>(p_), n);
        p_ += n;
        left_ -= n;
        return true;
    }
    std::size_t left() const { return left_; }

private:
    const unsigned char* p_;
    std::size_t left_;
};

} // namespace tent
