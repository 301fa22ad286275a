// TransportKind: the ways tent moves bytes (RDMA verbs, TCP, shared memory),
// named as policy rules, logs and metrics spell them. A service-layer type so
// that policy (which picks a kind) and transports (which are one) share it
// without either including the other.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace tent {

enum class TransportKind { Rdma = 0, Tcp = 1, Shm = 2 };
inline constexpr std::size_t kTransportKindCount = 3;

constexpr const char* transport_kind_name(TransportKind k) {
    switch (k) {
    case TransportKind::Rdma: return "rdma";
    case TransportKind::Tcp: return "tcp";
    case TransportKind::Shm: return "shm";
    }
    return "?";
}

// "rdma" | "tcp" | "shm" (as written in policy rules); nullopt otherwise.
inline std::optional<TransportKind> parse_transport_kind(std::string_view text) {
    for (std::size_t i = 0; i < kTransportKindCount; ++i) {
        auto k = static_cast<TransportKind>(i);
        if (text == transport_kind_name(k)) return k;
    }
    return std::nullopt;
}

// Transports in order of preference, each at most once. Fixed storage: a
// request's plan asks for one, and the data path allocates nothing for it.
class TransportList {
public:
    // Appends k unless it is already listed (a list holds each kind once,
    // so it never outgrows its storage).
    void add(TransportKind k) {
        for (std::size_t i = 0; i < size_; ++i)
            if (kinds_[i] == k) return;
        if (size_ < kinds_.size()) kinds_[size_++] = k;
    }
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    TransportKind operator[](std::size_t i) const { return kinds_[i]; }
    const TransportKind* data() const { return kinds_.data(); }
    const TransportKind* begin() const { return kinds_.data(); }
    const TransportKind* end() const { return kinds_.data() + size_; }

private:
    std::array<TransportKind, kTransportKindCount> kinds_{};
    std::size_t size_ = 0;
};

} // namespace tent
