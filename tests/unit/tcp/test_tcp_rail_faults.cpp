// Faults on a TCP rail never lose an operation and never hang: malformed
// frames injected raw into the socket are rejected ("tcp frame rejected"),
// the rail closes and every outstanding op completes with an error; a peer
// that closes or resets the connection mid-stream fails every outstanding op
// exactly once; a closed rail refuses new posts.
#include <criterion/criterion.h>

#include <sys/socket.h>

#include <cstdio>
#include <set>
#include <string>

#include "common/log.h"
#include "tcp_pair.h"
#include "wire/frame_codec.h"
#include "wire/frame_header.h"

using namespace tcp_test;

namespace {

constexpr std::uint32_t kKey = 0xFA17;

// Log lines captured into a temporary file.
struct LogCapture {
    std::FILE* file = std::tmpfile();
    LogCapture() { set_log_fd(::fileno(file)); }
    ~LogCapture() {
        set_log_fd(-1);
        std::fclose(file);
    }
    std::string text() {
        std::fflush(file);
        std::string out;
        std::rewind(file);
        char buf[4096];
        for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, file)) > 0;) out.append(buf, n);
        return out;
    }
};

// A rail whose peer is a raw socket the test writes bytes into.
struct RawPeer {
    std::unique_ptr<TcpRail> rail;
    UniqueFd raw;
    std::vector<RailCompletion> done;
    std::vector<std::uint8_t> target = std::vector<std::uint8_t>(1 << 16);
    Regions regions;

    RawPeer() {
        auto [fa, fb] = connected_sockets();
        if (!fa.valid()) return;
        auto r = TcpRail::create(std::move(fa), {kConnection, kRailId, "tcp raw"}, test_params(), regions.lookup(),
                                 SteadyClock::instance());
        if (!r) return;
        rail = std::move(*r);
        raw = std::move(fb);
        regions.add(kKey, target.data(), target.size(), wire::kAccessAll);
    }
    void inject(const std::vector<std::uint8_t>& bytes) {
        std::size_t sent = 0;
        for (int i = 0; i < 1000 && sent < bytes.size(); ++i) {
            ssize_t n = ::send(raw.get(), bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
            if (n > 0) sent += static_cast<std::size_t>(n);
            else ::poll(nullptr, 0, 1);
        }
        cr_assert_eq(sent, bytes.size());
    }
    // Progress until the rail closes (bounded).
    bool drive_until_closed() {
        for (int i = 0; i < 2000 && rail->is_open(); ++i) {
            rail->progress(done, nullptr);
            if (!rail->is_open()) break;
            pollfd p{rail->wait_fd(), POLLIN, 0};
            ::poll(&p, 1, 2);
        }
        rail->progress(done, nullptr);
        return !rail->is_open();
    }
};

std::vector<std::uint8_t> encoded(const wire::Frame& f) {
    auto bytes = wire::encode_frame(f);
    cr_assert(bytes.is_ok(), "%s", bytes.status().to_string().c_str());
    return *bytes;
}

wire::Frame frame_of(std::uint64_t seq, wire::FrameBody body, std::uint64_t connection = kConnection,
                     std::uint16_t rail = kRailId) {
    return wire::Frame{.flags = 0, .rail_id = rail, .connection_id = connection, .seq = seq, .body = std::move(body)};
}

// Raw header bytes, built by hand (independent of the encoder).
std::vector<std::uint8_t> raw_header(std::uint32_t magic, std::uint8_t type, std::uint32_t payload_length,
                                     std::uint64_t seq) {
    std::vector<std::uint8_t> b;
    auto put = [&b](std::uint64_t v, int n) {
        for (int i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    };
    put(magic, 4);
    put(1, 1);
    put(type, 1);
    put(0, 2);
    put(wire::kHeaderSize, 2);
    put(kRailId, 2);
    put(payload_length, 4);
    put(kConnection, 8);
    put(seq, 8);
    return b;
}

// Posts three ops that stay outstanding (the raw peer never answers),
// injects `bytes`, and checks the rail closes with every op failed once.
void expect_rejected(const std::vector<std::uint8_t>& bytes, const char* what) {
    LogCapture log;
    RawPeer peer;
    cr_assert(peer.rail, "setup");
    std::vector<std::uint8_t> src(100, 1), dst(100);
    cr_assert(peer.rail->post(write_op(1, src.data(), src.size(), 0x1000, 1)).is_ok());
    cr_assert(peer.rail->post(read_op(2, dst.data(), dst.size(), 0x1000, 1)).is_ok());
    cr_assert(peer.rail->post(send_op(3, src.data(), src.size())).is_ok());
    peer.inject(bytes);
    cr_assert(peer.drive_until_closed(), "%s: rail stayed open", what);
    const Status& why = peer.rail->close_reason();
    cr_expect_eq(why.code(), Code::TransportError, "%s: %s", what, why.to_string().c_str());
    cr_expect(why.message().find("frame rejected") != std::string::npos, "%s: %s", what, why.message().c_str());
    cr_assert_eq(peer.done.size(), 3u, "%s: every outstanding op completes exactly once", what);
    std::set<std::uint64_t> cookies;
    for (const auto& c : peer.done) {
        cookies.insert(c.cookie);
        cr_expect(!c.status.is_ok(), "%s", what);
    }
    cr_expect_eq(cookies, (std::set<std::uint64_t>{1, 2, 3}));
    cr_expect_eq(peer.done[0].outcome, RailOutcome::RetryExceeded, "%s: the oldest op carries the error", what);
    cr_expect_eq(peer.done[1].outcome, RailOutcome::Flushed);
    cr_expect_eq(peer.done[2].outcome, RailOutcome::Flushed);
    for (auto b : dst) cr_expect_eq(b, 0, "%s: a failed read wrote into its buffer", what);
    Status again = peer.rail->post(write_op(4, src.data(), 1, 0x1000, 1));
    cr_expect_eq(again.code(), Code::RailDown, "%s: a closed rail refuses posts", what);
    const std::string logged = log.text();
    cr_expect(logged.find("tcp frame rejected") != std::string::npos, "%s: log was '%s'", what, logged.c_str());
    // The peer is told and sees the connection end: Goodbye, then EOF.
    std::vector<std::uint8_t> rest(4096);
    std::size_t got = 0;
    for (int i = 0; i < 200; ++i) {
        ssize_t n = ::recv(peer.raw.get(), rest.data() + got, rest.size() - got, 0);
        if (n == 0) break;
        if (n > 0) got += static_cast<std::size_t>(n);
        else ::poll(nullptr, 0, 2);
    }
    cr_expect(got > 0, "%s: no goodbye sent", what);
}

} // namespace

Test(tcp_rail_faults, bad_magic_is_rejected) {
    expect_rejected(raw_header(0xDEADBEEF, static_cast<std::uint8_t>(wire::FrameType::Heartbeat), 16, 0),
                    "bad magic");
}

Test(tcp_rail_faults, oversize_length_is_rejected_without_waiting_for_it) {
    // A Write header announcing 4 GiB: rejected from the header alone.
    expect_rejected(raw_header(wire::kMagic, static_cast<std::uint8_t>(wire::FrameType::Write), 0xFFFFFFFF, 1),
                    "oversize payload length");
}

Test(tcp_rail_faults, unknown_type_is_rejected) {
    expect_rejected(raw_header(wire::kMagic, 99, 0, 0), "unknown type");
}

Test(tcp_rail_faults, garbage_is_rejected) {
    auto junk = pattern(200, 3);
    junk[0] = 'X';
    expect_rejected(junk, "garbage");
}

Test(tcp_rail_faults, frame_for_another_connection_or_rail_is_rejected) {
    expect_rejected(encoded(frame_of(0, wire::Heartbeat{1, 2}, kConnection + 1)), "other connection");
    expect_rejected(encoded(frame_of(0, wire::Heartbeat{1, 2}, kConnection, kRailId + 1)), "other rail");
}

Test(tcp_rail_faults, answers_that_match_no_op_are_rejected) {
    expect_rejected(encoded(frame_of(9, wire::Ack{})), "ack of a sequence never sent");
    expect_rejected(encoded(frame_of(1, wire::Nack{wire::FrameType::Send, wire::WireStatus::RemoteAccess})),
                    "nack naming the wrong op type");
    expect_rejected(encoded(frame_of(2, wire::ReadResponse{wire::WireStatus::Ok, std::vector<std::uint8_t>(99)})),
                    "read response of the wrong length");
    expect_rejected(encoded(frame_of(1, wire::ReadResponse{wire::WireStatus::Ok, std::vector<std::uint8_t>(100)})),
                    "read response for a write");
    expect_rejected(encoded(frame_of(0, wire::ProbeReply{77, 0})), "probe reply nobody asked for");
}

Test(tcp_rail_faults, out_of_sequence_requests_are_rejected) {
    expect_rejected(encoded(frame_of(2, wire::Write{kKey, 0, std::nullopt, {1}})), "write skipping a sequence");
}

Test(tcp_rail_faults, send_with_a_bad_header_length_is_rejected) {
    // Header length 500 in a 10-byte send.
    std::vector<std::uint8_t> data{0xF4, 0x01, 1, 2, 3, 4, 5, 6, 7, 8};
    expect_rejected(encoded(frame_of(1, wire::Send{std::nullopt, data})), "send header longer than the send");
}

Test(tcp_rail_faults, setup_frames_on_a_data_rail_are_rejected) {
    expect_rejected(encoded(frame_of(0, wire::Hello{.engine_id = 5, .rails = {{.rail_id = 1, .kind = wire::RailKind::Tcp}}})),
                    "hello on an established rail");
}

Test(tcp_rail_faults, valid_frames_before_the_bad_one_are_still_served) {
    RawPeer peer;
    cr_assert(peer.rail);
    auto bytes = encoded(frame_of(1, wire::Write{kKey, addr(peer.target.data()) + 10, std::nullopt, {9, 8, 7}}));
    auto bad = raw_header(0x12345678, 0, 0, 0);
    bytes.insert(bytes.end(), bad.begin(), bad.end());
    peer.inject(bytes);
    cr_assert(peer.drive_until_closed());
    cr_expect_eq(peer.target[10], 9);
    cr_expect_eq(peer.target[11], 8);
    cr_expect_eq(peer.target[12], 7);
    cr_expect_eq(peer.target[13], 0);
}

namespace {

// Posts `ops` writes of `size` bytes from a to b, lets a few go through, then
// ends b's socket (reset: RST instead of FIN) and checks every op on a
// completes exactly once, successes first, then the error, then flushes.
void peer_goes_away_mid_stream(bool reset) {
    auto pair = make_pair(SteadyClock::instance(), 16384);
    cr_assert(pair->ok());
    constexpr std::size_t kOps = 64, kSize = 256 * 1024;
    auto src = pattern(kSize, 1);
    std::vector<std::uint8_t> target(kSize);
    pair->regions_b.add(kKey, target.data(), target.size(), wire::kAccessAll);
    for (std::size_t i = 0; i < kOps; ++i)
        cr_assert(pair->a->post(write_op(i, src.data(), kSize, addr(target.data()), kKey)).is_ok());
    cr_assert(pair->drive_until(3));
    cr_assert_lt(pair->done_a.size(), kOps, "the peer must go away mid-stream");
    if (reset) {
        linger l{1, 0};
        cr_assert_eq(::setsockopt(pair->b->wait_fd(), SOL_SOCKET, SO_LINGER, &l, sizeof l), 0);
    }
    pair->b.reset();
    for (int i = 0; i < 2000 && pair->a->is_open(); ++i) {
        pair->a->progress(pair->done_a, nullptr);
        pollfd p{pair->a->wait_fd(), POLLIN, 0};
        ::poll(&p, 1, 2);
    }
    pair->a->progress(pair->done_a, nullptr);
    cr_assert_not(pair->a->is_open());
    cr_expect_eq(pair->a->close_reason().code(), Code::RailDown, "%s", pair->a->close_reason().to_string().c_str());
    cr_assert_eq(pair->done_a.size(), kOps, "every op completes exactly once");
    std::set<std::uint64_t> cookies;
    std::size_t success = 0, errors = 0, flushed = 0;
    for (const auto& c : pair->done_a) {
        cookies.insert(c.cookie);
        if (c.outcome == RailOutcome::Success) {
            cr_expect_eq(errors + flushed, 0u, "no success after the failure");
            ++success;
        } else if (c.outcome == RailOutcome::RetryExceeded) {
            ++errors;
        } else {
            cr_expect_eq(c.outcome, RailOutcome::Flushed);
            ++flushed;
        }
    }
    cr_expect_eq(cookies.size(), kOps);
    cr_expect_eq(errors, 1u);
    cr_expect_eq(success + errors + flushed, kOps);
    cr_expect_eq(pair->a->outstanding(), 0u);
    pair->a->progress(pair->done_a, nullptr);
    cr_expect_eq(pair->done_a.size(), kOps, "no completion twice");
}

} // namespace

Test(tcp_rail_faults, peer_close_mid_stream_fails_every_outstanding_op) { peer_goes_away_mid_stream(false); }

Test(tcp_rail_faults, peer_reset_mid_stream_fails_every_outstanding_op) { peer_goes_away_mid_stream(true); }

Test(tcp_rail_faults, local_close_flushes_and_the_peer_fails_its_ops) {
    auto pair = make_pair();
    cr_assert(pair->ok());
    std::uint8_t byte = 1;
    // b posts a write a never answers (a is closed first); a has a probe outstanding.
    cr_assert(pair->a->post(probe_op(1)).is_ok());
    cr_assert(pair->a->post(write_op(2, &byte, 1, 0x1000, kKey)).is_ok());
    pair->a->close();
    cr_expect_not(pair->a->is_open());
    std::vector<RailCompletion> done;
    pair->a->progress(done, nullptr);
    cr_assert_eq(done.size(), 2u);
    cr_expect_eq(done[0].outcome, RailOutcome::ProbeFailed);
    cr_expect_eq(done[1].outcome, RailOutcome::Flushed);
    cr_expect_eq(pair->a->post(probe_op(3)).code(), Code::RailDown);
    // b learns: goodbye or EOF closes it.
    for (int i = 0; i < 1000 && pair->b->is_open(); ++i) {
        pair->b->progress(pair->done_b, nullptr);
        ::poll(nullptr, 0, 1);
    }
    cr_expect_not(pair->b->is_open());
}

// Silence, on a ManualClock: heartbeats keep an idle pair alive for as long
// as both progress; a peer that stops sending is declared dead after
// tcp_silence_intervals and its outstanding ops complete with Timeout.
Test(tcp_rail_faults, heartbeats_keep_an_idle_rail_alive_and_silence_kills_it) {
    ManualClock clock;
    auto pair = make_pair(clock);
    cr_assert(pair->ok());
    auto step = [&] {
        for (int k = 0; k < 3; ++k) {
            pair->a->progress(pair->done_a, nullptr);
            pair->b->progress(pair->done_b, nullptr);
            ::poll(nullptr, 0, 1);
        }
    };
    for (int i = 0; i < 30; ++i) {
        clock.advance(std::chrono::milliseconds(900));
        step();
        cr_assert(pair->a->is_open() && pair->b->is_open(), "idle rail declared dead at step %d", i);
    }
    // b stops progressing (a hung peer: its kernel still acks TCP).
    cr_assert(pair->a->post(probe_op(1)).is_ok());
    for (int i = 0; i < 4; ++i) {
        clock.advance(std::chrono::milliseconds(1000));
        pair->a->progress(pair->done_a, nullptr);
        cr_assert(pair->a->is_open(), "dead too early, after %d s", i + 1);
    }
    clock.advance(std::chrono::milliseconds(1000));
    pair->a->progress(pair->done_a, nullptr);
    cr_expect_not(pair->a->is_open());
    cr_expect_eq(pair->a->close_reason().code(), Code::Timeout);
    cr_assert_eq(pair->done_a.size(), 1u);
    cr_expect_eq(pair->done_a[0].outcome, RailOutcome::ProbeFailed);
}

Test(tcp_rail_faults, silence_fails_outstanding_data_ops_with_timeout) {
    ManualClock clock;
    auto pair = make_pair(clock);
    cr_assert(pair->ok());
    std::uint8_t byte = 1;
    cr_assert(pair->a->post(write_op(1, &byte, 1, 0x1000, kKey)).is_ok());
    cr_assert(pair->a->post(write_op(2, &byte, 1, 0x1000, kKey)).is_ok());
    // a looks once per heartbeat interval (1 s): all of it is watched time.
    for (int i = 0; i < 5; ++i) {
        clock.advance(std::chrono::seconds(1));
        pair->a->progress(pair->done_a, nullptr);
    }
    cr_expect_not(pair->a->is_open());
    cr_assert_eq(pair->done_a.size(), 2u);
    cr_expect_eq(pair->done_a[0].outcome, RailOutcome::Timeout);
    cr_expect_eq(pair->done_a[0].status.code(), Code::Timeout);
    cr_expect_eq(pair->done_a[1].outcome, RailOutcome::Flushed);
}
