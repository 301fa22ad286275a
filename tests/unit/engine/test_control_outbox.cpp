// Control frames are sent without ever blocking (engine/control_outbox.h):
// what the socket cannot take waits and goes out in order when it drains; a
// peer that stops reading altogether is given up once a megabyte of frames
// waits for it, and meanwhile never holds up an application's wait() that
// drives the engine, nor the engine's other peers.
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/control_outbox.h"
#include "transport/tcp/control_socket.h"
#include "../../support/tcp_engine_pair.h"
#include "wire/frame_codec.h"
#include "wire/frame_scanner.h"

using namespace tent;
using namespace tent::test;
using Steady = std::chrono::steady_clock;

namespace {

wire::Frame sync_request(std::uint32_t epoch) { return wire::Frame{0, 0, 7, 0, wire::SyncRequest{epoch, epoch}}; }

// A connected pair of blocking stream sockets with small buffers: a send
// that waited for room would hang (and SIGALRM end the test).
struct SocketPair {
    int writer = -1, reader = -1;
    SocketPair() {
        int fds[2];
        cr_assert_eq(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
        writer = fds[0];
        reader = fds[1];
        int small = 4096;
        ::setsockopt(writer, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
        ::setsockopt(reader, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
        ::alarm(20);
    }
    ~SocketPair() {
        ::alarm(0);
        if (writer >= 0) ::close(writer);
        if (reader >= 0) ::close(reader);
    }
};

// Every whole frame in `bytes`, decoded; asserts there is nothing else.
std::vector<wire::Frame> frames_in(const std::vector<std::uint8_t>& bytes) {
    std::vector<wire::Frame> out;
    std::span<const std::uint8_t> rest(bytes);
    while (!rest.empty()) {
        wire::FrameScan scan = wire::scan_frame(rest);
        cr_assert(scan.state == wire::ScanState::Complete, "a partial or malformed frame after %zu frames", out.size());
        auto frame = wire::decode_frame(rest.first(scan.bytes));
        cr_assert(frame.is_ok());
        out.push_back(*frame);
        rest = rest.subspan(scan.bytes);
    }
    return out;
}

} // namespace

Test(control_outbox, what_the_socket_cannot_take_waits_and_arrives_in_order) {
    SocketPair s;
    ControlOutbox out;
    constexpr std::uint32_t kFrames = 3000;
    std::uint32_t queued = 0;
    std::size_t most_waiting = 0;
    for (; queued < kFrames; ++queued) {
        cr_assert(out.queue(sync_request(queued + 1)).is_ok());
        cr_assert(out.flush(s.writer).is_ok());
        most_waiting = std::max(most_waiting, out.backlog());
    }
    cr_assert_gt(most_waiting, 0u, "the socket never filled: the test proves nothing");
    // The reader drains; flushes deliver the rest.
    std::vector<std::uint8_t> got;
    std::uint8_t buf[4096];
    const int flags = ::fcntl(s.reader, F_GETFL);
    ::fcntl(s.reader, F_SETFL, flags | O_NONBLOCK);
    for (int round = 0; round < 100000 && !(out.empty() && got.size() > 0); ++round) {
        cr_assert(out.flush(s.writer).is_ok());
        ssize_t n = ::recv(s.reader, buf, sizeof buf, 0);
        if (n > 0) got.insert(got.end(), buf, buf + n);
    }
    for (ssize_t n; (n = ::recv(s.reader, buf, sizeof buf, 0)) > 0;) got.insert(got.end(), buf, buf + n);
    cr_assert(out.empty());
    const auto frames = frames_in(got);
    cr_assert_eq(frames.size(), kFrames);
    for (std::uint32_t i = 0; i < kFrames; ++i) {
        const auto* req = std::get_if<wire::SyncRequest>(&frames[i].body);
        cr_assert(req, "frame %u is not the SyncRequest queued", i);
        cr_expect_eq(req->epoch, i + 1, "frame %u out of order", i);
        cr_expect_eq(req->last_delivered, i + 1);
    }
}

Test(control_outbox, a_peer_that_never_reads_is_refused_at_the_backlog_cap) {
    SocketPair s;
    ControlOutbox out;
    Status refused;
    std::size_t frames = 0;
    for (; frames < 1000000; ++frames) {
        refused = out.queue(sync_request(1));
        if (!refused) break;
        cr_assert(out.flush(s.writer).is_ok());
    }
    cr_assert(!refused.is_ok(), "a megabyte of frames waited and more were taken");
    cr_expect_eq(refused.code(), Code::PeerUnreachable);
    cr_expect(refused.message().find("unread") != std::string::npos, "%s", refused.message().c_str());
    cr_expect_leq(out.backlog(), ControlOutbox::kMaxBacklog);
    cr_expect_gt(out.backlog(), ControlOutbox::kMaxBacklog - 64, "refused before the cap");
}

Test(control_outbox, a_closed_socket_is_an_error_not_a_signal) {
    SocketPair s;
    ::close(s.reader);
    s.reader = -1;
    ControlOutbox out;
    cr_assert(out.queue(sync_request(1)).is_ok());
    cr_expect_not(out.flush(s.writer).is_ok());  // EPIPE, without SIGPIPE
}

namespace {

// A peer of b that completes the handshake with no rails, then floods b
// with SyncRequests and never reads b's replies. It introduces itself with
// a copy of some engine's address blob under an engine id of its own: b
// keeps one connection per engine, and would send a peer that claims an
// engine already connected to it back to that connection (Crossed).
class DeafPeer {
public:
    static constexpr std::uint64_t kConnectionId = 0x5eed5eed5eedull;
    static constexpr std::uint64_t kEngineId = 0x5eed;

    DeafPeer(Engine& b, std::span<const std::uint8_t> some_blob, const Config& config) {
        auto frame = wire::decode_frame(b.address());
        cr_assert(frame.is_ok());
        const auto* addr = std::get_if<wire::AddressBlob>(&frame->body);
        cr_assert(addr && !addr->tcp.empty() && addr->tcp[0].family == 4);
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        cr_assert_geq(fd_, 0);
        int small = 4096;
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);  // b's replies fill it soon
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_port = htons(addr->tcp[0].port);
        std::memcpy(&sa.sin_addr, addr->tcp[0].addr.data(), 4);
        cr_assert_eq(::connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
        cr_assert(set_blocking_with_timeout(fd_, std::chrono::seconds(10)).is_ok());
        // It holds the job's key (the same configuration as b's): it gets in.
        cr_assert(keyed_hello_accepted(fd_, config, some_blob, kEngineId, kEngineId, kConnectionId),
                  "b did not accept the deaf peer");
        flooder_ = std::thread([this] { flood(); });
    }
    ~DeafPeer() {
        stop_ = true;
        flooder_.join();
        ::close(fd_);
    }
    std::size_t requests_sent() const { return sent_.load(); }

private:
    void flood() {
        std::vector<std::uint8_t> batch;
        for (std::uint32_t i = 1; i <= 256; ++i) {
            auto bytes = wire::encode_frame(sync_request(i));
            batch.insert(batch.end(), bytes->begin(), bytes->end());
        }
        const auto end = Steady::now() + std::chrono::seconds(90);
        std::size_t off = 0;
        while (!stop_ && Steady::now() < end) {
            ssize_t n = ::send(fd_, batch.data() + off, batch.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                continue;
            }
            if (n <= 0) return;  // b closed the channel
            off += static_cast<std::size_t>(n);
            if (off == batch.size()) {
                off = 0;
                sent_ += 256;
            }
        }
    }

    int fd_ = -1;
    std::atomic<bool> stop_{false};
    std::atomic<std::size_t> sent_{0};
    std::thread flooder_;
};

} // namespace

Test(control_outbox, a_peer_that_stops_reading_never_blocks_the_application_and_is_given_up) {
    // A control send that waited for room would block for connect_timeout_ms
    // (20 s); a turn that answers thousands of the flood's frames takes tens
    // of milliseconds, seconds under valgrind.
    Config c = loopback_config();
    (void)c.set(Knob::ConnectTimeoutMs, "20000", api_source());
    EnginePair p(1, {0}, c);
    cr_assert(p.a && p.b && p.a_to_b);
    std::mutex mu;
    std::vector<std::pair<PeerId, std::string>> given_up;
    p.b->set_unreachable_callback([&](PeerId peer, const Status& why) {
        std::lock_guard lock(mu);
        given_up.emplace_back(peer, why.message());
    });
    auto deaf_given_up = [&] {
        std::lock_guard lock(mu);
        return !given_up.empty();
    };
    std::vector<std::uint8_t> a_blob(p.a->address().begin(), p.a->address().end());
    auto longest = std::chrono::nanoseconds::zero();
    {
        DeafPeer deaf(*p.b, a_blob, c);
        const auto end = Steady::now() + std::chrono::seconds(60);
        while (!deaf_given_up() && Steady::now() < end) {
            const auto t0 = Steady::now();
            (void)p.b->wait(std::chrono::milliseconds(2));  // the application drives b
            std::vector<EngineCompletion> sink;
            (void)p.b->poll(sink, 8);
            longest = std::max(longest, Steady::now() - t0);
        }
        cr_log_info("the deaf peer sent %zu SyncRequests; longest wait() %lld us", deaf.requests_sent(),
                    (long long)std::chrono::duration_cast<std::chrono::microseconds>(longest).count());
    }
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(longest).count();
    cr_expect_lt(ms, 10000, "a wait() of 2 ms took %lld ms: a control send blocked", (long long)ms);
    {
        std::lock_guard lock(mu);
        cr_assert_eq(given_up.size(), 1u, "the deaf peer was not given up within 60 s");
        cr_expect_eq(given_up[0].first, DeafPeer::kConnectionId);
        cr_expect(given_up[0].second.find("unread") != std::string::npos, "%s", given_up[0].second.c_str());
    }
    // b's other peer never noticed: a message from a arrives whole.
    std::vector<std::uint8_t> msg(5000);
    fill(msg, 21);
    std::mutex got_mu;
    std::vector<std::uint8_t> got;
    p.b->set_recv_callback([&](PeerId, std::span<const std::uint8_t> m) {
        std::lock_guard lock(got_mu);
        got.assign(m.begin(), m.end());
    });
    cr_assert(p.a->post_send(p.a_to_b, msg.data(), msg.size(), with_cookie(1)).is_ok());
    const auto end = Steady::now() + std::chrono::seconds(10);
    for (;;) {
        {
            std::lock_guard lock(got_mu);
            if (!got.empty() || Steady::now() > end) break;
        }
        (void)p.b->wait(std::chrono::milliseconds(2));
    }
    std::lock_guard lock(got_mu);
    cr_expect(got == msg, "a's message did not arrive whole after the deaf peer was given up");
}
