// Two engines in one process over real TCP rails on 127.0.0.1 and 127.0.0.2,
// and a checked stream between them: the set-up the engine tests that break
// TCP rails (faults, atomics, strangers, healing) share. Criterion tests
// only (it asserts); the C API's test stays in C.
#pragma once

#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "../unit/engine/engine_pair.h"
#include "engine/default_providers.h"
#include "engine/job_key.h"
#include "transport/tcp/auth_socket.h"
#include "transport/tcp/control_socket.h"
#include "wire/frame_codec.h"
#include "wire/protocol.h"

namespace tent::test {

// Two TCP rails on loopback addresses, small chunks so that a 1 MiB write
// stripes over both, no rail judged slow (loopback latency is scheduler
// noise on a loaded machine), and only errors logged (a broken rail is a
// warning). Tests add their own knobs.
inline Config tcp_pair_config() {
    Config c;
    Source api = api_source();
    (void)c.set(Knob::ControlAddress, "127.0.0.1", api);
    (void)c.set(Knob::TcpRailAddresses, "127.0.0.1,127.0.0.2", api);
    (void)c.set(Knob::ChunkSize, "256K", api);
    (void)c.set(Knob::StripingThreshold, "64K", api);
    (void)c.set(Knob::StripingMinChunk, "16K", api);
    (void)c.set(Knob::SendFragmentSize, "16K", api);
    (void)c.set(Knob::SlowRailFactor, "1000", api);
    (void)c.set(Knob::LogLevel, "error", api);
    return c;
}

// The same with 64K socket buffers: the rails' own queues, not the kernel,
// then hold most of what is in flight (tests that deregister memory under
// queued frames).
inline Config tcp_pair_small_socket_config() {
    Config c = tcp_pair_config();
    (void)c.set(Knob::TcpSendBufferSize, "64K", api_source());
    (void)c.set(Knob::TcpReceiveBufferSize, "64K", api_source());
    return c;
}

// An engine on the default providers (the TCP rails the config names).
inline std::unique_ptr<Engine> make_tcp_engine(const Config& config) {
    auto providers = make_default_providers(config);
    cr_assert(providers.is_ok(), "%s", providers.status().to_string().c_str());
    auto r = Engine::create(config, std::move(*providers));
    cr_assert(r.is_ok(), "%s", r.status().to_string().c_str());
    return std::move(*r);
}

// The statistics of the first rail whose name starts with prefix.
inline const RailStats* stats_of(const std::vector<RailStats>& all, const char* prefix) {
    for (const auto& s : all)
        if (s.name.rfind(prefix, 0) == 0) return &s;
    return nullptr;
}

inline std::uint64_t rail_bytes(Engine& e, const char* prefix) {
    auto all = e.rail_stats();
    const RailStats* s = stats_of(all, prefix);
    return s ? s->bytes : 0;
}

// The addresses an engine advertises: its control port first, then its
// TCP rails.
inline std::vector<wire::TcpAddress> advertised_tcp_addresses(const Engine& e) {
    auto blob = wire::decode_frame(e.address());
    cr_assert(blob.is_ok());
    auto addresses = std::get<wire::AddressBlob>(blob->body).tcp;
    cr_assert_geq(addresses.size(), 2u, "the engine advertises a control and a rail address");
    return addresses;
}

// A raw TCP connection to one of those addresses, as a stranger or a
// peer's engine would open it; every read on it gives up after 5 s.
// -1 when nothing listens there.
inline int dial_tcp(const wire::TcpAddress& a) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(a.port);
    std::memcpy(&sa.sin_addr, a.addr.data(), 4);
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

inline void send_bytes(int fd, const void* p, std::size_t n) { (void)!::send(fd, p, n, MSG_NOSIGNAL); }

// Reads until the engine closes the socket (or 5 s pass on a dial_tcp()
// socket); returns the bytes read, or -1 when the socket stayed open.
inline long bytes_until_closed(int fd, std::vector<std::uint8_t>* got = nullptr) {
    long total = 0;
    for (int i = 0; i < 1000; ++i) {
        char buf[256];
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n > 0) {
            total += n;
            if (got) got->insert(got->end(), buf, buf + n);
            continue;
        }
        if (n == 0 || errno == ECONNRESET) return total;
        return -1;  // timed out: still open
    }
    return -1;
}

// A connector's opening: the address blob some_blob under engine id
// blob_engine, then a Hello naming hello_engine on connection connection_id.
inline std::vector<std::uint8_t> opening_bytes(std::span<const std::uint8_t> some_blob, std::uint64_t blob_engine,
                                               std::uint64_t hello_engine, std::uint64_t connection_id) {
    auto blob = wire::decode_frame(some_blob);
    cr_assert(blob.is_ok());
    std::get<wire::AddressBlob>(blob->body).engine_id = blob_engine;
    auto blob_bytes = wire::encode_frame(*blob);
    cr_assert(blob_bytes.is_ok());
    auto hello = wire::encode_frame(wire::Frame{0, 0, connection_id, 0, wire::Hello{.engine_id = hello_engine, .rails = {}}});
    cr_assert(hello.is_ok());
    std::vector<std::uint8_t> opening(blob_bytes->begin(), blob_bytes->end());
    opening.insert(opening.end(), hello->begin(), hello->end());
    return opening;
}

// Opens a control connection on fd (connected to an engine's control port,
// blocking with a timeout) as a peer holding config's job key would: the
// address blob some_blob under engine id blob_engine, then a Hello naming
// hello_engine on connection connection_id, and the proof. Whether the
// engine answered with an accepting HelloAck (false when it refused or
// closed).
inline bool keyed_hello_accepted(int fd, const Config& config, std::span<const std::uint8_t> some_blob,
                                 std::uint64_t blob_engine, std::uint64_t hello_engine,
                                 std::uint64_t connection_id) {
    auto keys = load_job_key(config);
    cr_assert(keys.is_ok(), "%s", keys.status().to_string().c_str());
    auto auth = tcp::AuthProver::start(**keys);
    cr_assert(auth.is_ok(), "%s", auth.status().to_string().c_str());
    const auto opening = opening_bytes(some_blob, blob_engine, hello_engine, connection_id);
    const auto deadline = SteadyClock::instance().now() + std::chrono::seconds(10);
    if (!auth->open(fd, opening, deadline).is_ok()) return false;
    auto ack_start = auth->prove(fd, deadline);
    if (!ack_start.is_ok()) return false;
    auto ack = recv_frame(fd, std::move(*ack_start));
    return ack.is_ok() && std::holds_alternative<wire::HelloAck>(ack->body) &&
           std::get<wire::HelloAck>(ack->body).result == wire::HelloResult::Accepted;
}

// a connected to b.
struct TcpPair {
    std::unique_ptr<Engine> a, b;
    PeerId peer = 0;
    explicit TcpPair(const Config& config) : a(make_tcp_engine(config)), b(make_tcp_engine(config)) {
        auto c = a->connect(b->address());
        cr_assert(c.is_ok(), "%s", c.status().to_string().c_str());
        peer = *c;
    }
};

// The messages b receives, checked against those a sent: every one exactly
// once and in order. Declared after the engines (it detaches first).
class MessageCheck {
public:
    explicit MessageCheck(Engine& receiver) : receiver_(receiver) {
        receiver_.set_recv_callback([this](PeerId, std::span<const std::uint8_t> m) {
            std::lock_guard lock(mu_);
            got_.emplace_back(m.begin(), m.end());
        });
    }
    ~MessageCheck() { receiver_.set_recv_callback(nullptr); }
    MessageCheck(const MessageCheck&) = delete;
    MessageCheck& operator=(const MessageCheck&) = delete;

    // Sends bytes from sender to peer and waits (bounded) for its completion.
    void send(Engine& sender, PeerId peer, const std::uint8_t* data, std::size_t n, std::uint64_t cookie,
              const char* what) {
        sent_.emplace_back(data, data + n);
        cr_assert(sender.post_send(peer, sent_.back().data(), n, with_cookie(cookie)).is_ok());
        auto c = wait_completions(sender, 1, std::chrono::seconds(30));
        cr_assert_eq(c.size(), 1u, "%s: the send did not complete", what);
        cr_assert(c[0].status.is_ok(), "%s: send: %s", what, c[0].status.to_string().c_str());
    }

    // Messages are delivered on the receiver's progress thread: waits
    // (bounded) for the last one, then checks them all.
    void expect_every_message() {
        for (int i = 0; i < 2000; ++i) {
            {
                std::lock_guard lock(mu_);
                if (got_.size() >= sent_.size()) break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        std::lock_guard lock(mu_);
        cr_assert_eq(got_.size(), sent_.size(), "%zu messages arrived of %zu sent", got_.size(), sent_.size());
        for (std::size_t i = 0; i < sent_.size(); ++i) cr_assert(got_[i] == sent_[i], "message %zu differs", i);
    }

private:
    Engine& receiver_;
    std::mutex mu_;
    std::vector<std::vector<std::uint8_t>> got_, sent_;
};

// A stream of rounds from a to b, each a striped 1 MiB write checked byte
// for byte and then a message (checked by expect_every_message()).
class CheckedStream {
public:
    static constexpr std::size_t kSize = 1u << 20;

    CheckedStream(Engine& a, PeerId peer, Engine& b, std::size_t message_base)
        : a_(a), peer_(peer), messages_(b), message_base_(message_base), src_(kSize), dst_(kSize) {
        auto rs = a.register_memory(src_.data(), kSize, wire::kAccessAll);
        auto rd = b.register_memory(dst_.data(), kSize, wire::kAccessAll);
        cr_assert(rs.is_ok() && rd.is_ok());
        remote_ = handle_bytes(**rd);
    }

    // A write started and left in flight (the caller breaks something
    // meanwhile); finish_write() waits for it and checks its bytes.
    void start_write() {
        fill(src_, ++round_);
        cr_assert(a_.post_write(peer_, src_.data(), kSize, remote_, base(), with_cookie(round_)).is_ok());
    }
    void finish_write(const char* what) {
        auto c = wait_completions(a_, 1, std::chrono::seconds(30));
        cr_assert_eq(c.size(), 1u, "%s: the write did not complete", what);
        cr_assert(c[0].status.is_ok(), "%s: %s", what, c[0].status.to_string().c_str());
        cr_assert(src_ == dst_, "%s: bytes written differ", what);
    }

    // One round: a write checked byte for byte, then a message of
    // message_base + round bytes.
    void round() {
        start_write();
        char what[32];
        std::snprintf(what, sizeof what, "round %u", round_);
        finish_write(what);
        messages_.send(a_, peer_, src_.data(), message_base_ + round_, round_, what);
    }

    unsigned rounds() const { return round_; }
    void expect_every_message() { messages_.expect_every_message(); }

private:
    std::uint64_t base() const { return reinterpret_cast<std::uint64_t>(dst_.data()); }

    Engine& a_;
    PeerId peer_;
    MessageCheck messages_;
    std::size_t message_base_;
    std::vector<std::uint8_t> src_, dst_;
    std::vector<std::uint8_t> remote_;
    unsigned round_ = 0;
};

} // namespace tent::test
