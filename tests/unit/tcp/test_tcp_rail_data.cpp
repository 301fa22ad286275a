// A TCP rail moves bytes exactly: one-sided writes and reads and two-sided
// sends at every size from 1 byte to the rail's maximum arrive intact (every
// byte checked), each op completes exactly once with its cookie, and many
// ops in flight over a tiny socket buffer (forcing partial writes) all land.
// A lone Ack waits one turn of its rail at most, and an answer carries it.
// Large frames read whole (with what follows them) land as exactly. A turn
// answers a bounded share of the reads waiting for it; posts between
// begin_posts() and end_posts() leave together.
#include <criterion/criterion.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <functional>
#include <set>

#include "tcp_pair.h"
#include "wire/frame_header.h"

using namespace tcp_test;

namespace {

constexpr std::uint32_t kKey = 0xA11CE;

std::vector<std::uint64_t> sizes(std::uint64_t max) {
    return {1, 2, 3, 31, 32, 33, 4095, 4096, 4097, 65536, 1000003, max - 1, max};
}

} // namespace

Test(tcp_rail_data, max_op_length_leaves_room_for_the_send_header) {
    auto pair = make_pair();
    cr_assert(pair->ok());
    cr_expect_eq(pair->a->max_op_length(), wire::kMaxDataLength - kSendHeaderReserve);
    cr_expect_eq(pair->a->kind(), TransportKind::Tcp);
    std::vector<std::uint8_t> big(pair->a->max_op_length() + 1);
    Status s = pair->a->post(write_op(1, big.data(), big.size(), 0, kKey));
    cr_expect_eq(s.code(), Code::InvalidArgument, "%s", s.to_string().c_str());
    cr_expect(pair->drive_until(0, 50ms));
    cr_expect_eq(pair->done_a.size(), 0u, "a rejected post has no completion");
}

Test(tcp_rail_data, writes_of_every_size_land_byte_exact) {
    auto pair = make_pair();
    cr_assert(pair->ok());
    const std::uint64_t max = pair->a->max_op_length();
    std::vector<std::uint8_t> target(max + 64, 0xEE);
    pair->regions_b.add(kKey, target.data(), target.size(), wire::kAccessAll);
    std::uint32_t seed = 1;
    for (std::uint64_t n : sizes(max)) {
        auto src = pattern(n, ++seed);
        std::fill(target.begin(), target.end(), 0xEE);
        const std::uint64_t offset = n % 61;
        const std::size_t before = pair->done_a.size();
        Status s = pair->a->post(write_op(1000 + n, src.data(), n, addr(target.data()) + offset, kKey));
        cr_assert(s.is_ok(), "%s", s.to_string().c_str());
        cr_assert(pair->drive_until(before + 1), "write of %lu bytes never completed", n);
        const auto& c = pair->done_a.back();
        cr_expect_eq(c.cookie, 1000 + n);
        cr_expect_eq(c.outcome, RailOutcome::Success, "%s", c.status.to_string().c_str());
        cr_expect_eq(first_difference(target.data() + offset, src.data(), n), -1, "write of %lu bytes", n);
        // Nothing around the range was touched.
        for (std::uint64_t i = 0; i < offset; ++i) cr_assert_eq(target[i], 0xEE);
        for (std::uint64_t i = offset + n; i < target.size(); ++i) cr_assert_eq(target[i], 0xEE);
    }
    cr_expect_eq(pair->done_a.size(), sizes(max).size(), "exactly one completion per write");
}

Test(tcp_rail_data, reads_of_every_size_return_byte_exact) {
    auto pair = make_pair();
    cr_assert(pair->ok());
    const std::uint64_t max = pair->a->max_op_length();
    auto remote = pattern(max + 64, 77);
    pair->regions_b.add(kKey, remote.data(), remote.size(), wire::kAccessLocalWrite | wire::kAccessRemoteRead);
    std::vector<std::uint8_t> local(max);
    for (std::uint64_t n : sizes(max)) {
        std::fill(local.begin(), local.end(), 0x11);
        const std::uint64_t offset = n % 53;
        const std::size_t before = pair->done_a.size();
        Status s = pair->a->post(read_op(n, local.data(), n, addr(remote.data()) + offset, kKey));
        cr_assert(s.is_ok(), "%s", s.to_string().c_str());
        cr_assert(pair->drive_until(before + 1), "read of %lu bytes never completed", n);
        cr_expect_eq(pair->done_a.back().cookie, n);
        cr_expect_eq(pair->done_a.back().outcome, RailOutcome::Success, "%s",
                     pair->done_a.back().status.to_string().c_str());
        cr_expect_eq(first_difference(local.data(), remote.data() + offset, n), -1, "read of %lu bytes", n);
        for (std::uint64_t i = n; i < local.size(); ++i) cr_assert_eq(local[i], 0x11, "read wrote past its length");
    }
}

Test(tcp_rail_data, sends_of_every_size_arrive_with_header_in_order) {
    auto pair = make_pair();
    cr_assert(pair->ok());
    const std::uint64_t max = pair->a->max_op_length();
    auto all = sizes(max);
    std::vector<std::vector<std::uint8_t>> payloads, headers;
    for (std::size_t i = 0; i < all.size(); ++i) {
        payloads.push_back(pattern(all[i], 300 + i));
        headers.push_back(pattern(i == 0 ? 0 : i == 1 ? kMaxSendHeaderLength : 16 + i, 900 + i));
    }
    for (std::size_t i = 0; i < all.size(); ++i) {
        Status s = pair->a->post(send_op(i, payloads[i].data(), all[i], headers[i]));
        cr_assert(s.is_ok(), "%s", s.to_string().c_str());
    }
    cr_assert(pair->drive_until(all.size()));
    cr_assert_eq(pair->messages_b.size(), all.size(), "each send delivered exactly once");
    for (std::size_t i = 0; i < all.size(); ++i) {
        cr_expect_eq(pair->done_a[i].outcome, RailOutcome::Success);
        cr_expect_eq(pair->done_a[i].cookie, i, "completions in posting order");
        cr_assert_eq(pair->messages_b[i].size(), all[i]);
        cr_expect_eq(first_difference(pair->messages_b[i].data(), payloads[i].data(), all[i]), -1, "send %zu", i);
        cr_assert_eq(pair->headers_b[i].size(), headers[i].size());
        cr_expect_eq(first_difference(pair->headers_b[i].data(), headers[i].data(), headers[i].size()), -1);
    }
    std::vector<std::uint8_t> too_big_header(kMaxSendHeaderLength + 1);
    std::uint8_t one = 1;
    Status s = pair->a->post(send_op(99, &one, 1, too_big_header));
    cr_expect_eq(s.code(), Code::InvalidArgument);
}

Test(tcp_rail_data, zero_length_ops_and_probes_complete) {
    auto pair = make_pair();
    cr_assert(pair->ok());
    std::uint8_t target[8] = {};
    pair->regions_b.add(kKey, target, sizeof target, wire::kAccessAll);
    cr_assert(pair->a->post(write_op(1, nullptr, 0, addr(target), kKey)).is_ok());
    cr_assert(pair->a->post(read_op(2, nullptr, 0, addr(target), kKey)).is_ok());
    cr_assert(pair->a->post(probe_op(3)).is_ok());
    cr_assert(pair->a->post(send_op(4, nullptr, 0)).is_ok());
    cr_assert(pair->drive_until(4));
    std::map<std::uint64_t, RailOutcome> by_cookie;
    for (const auto& c : pair->done_a) by_cookie[c.cookie] = c.outcome;
    cr_expect_eq(by_cookie.size(), 4u);
    cr_expect_eq(by_cookie[1], RailOutcome::Success);
    cr_expect_eq(by_cookie[2], RailOutcome::Success);
    cr_expect_eq(by_cookie[3], RailOutcome::ProbeAnswered);
    cr_expect_eq(by_cookie[4], RailOutcome::Success);
    cr_expect_eq(pair->messages_b.size(), 1u);
    cr_expect(pair->messages_b[0].empty());
}

// 2000 writes of assorted sizes posted before any progress, through 4 KiB
// socket buffers: the outgoing queue is flushed in many partial writes.
Test(tcp_rail_data, many_ops_in_flight_through_a_small_send_buffer) {
    auto pair = make_pair(SteadyClock::instance(), 4096);
    cr_assert(pair->ok());
    constexpr std::size_t kOps = 2000;
    std::vector<std::uint64_t> offsets(kOps + 1, 0);
    for (std::size_t i = 0; i < kOps; ++i) offsets[i + 1] = offsets[i] + 1 + (i * 7919) % 9000;
    auto src = pattern(offsets[kOps], 5);
    std::vector<std::uint8_t> target(offsets[kOps], 0);
    pair->regions_b.add(kKey, target.data(), target.size(), wire::kAccessAll);
    for (std::size_t i = 0; i < kOps; ++i) {
        Status s = pair->a->post(write_op(i, src.data() + offsets[i], offsets[i + 1] - offsets[i],
                                          addr(target.data()) + offsets[i], kKey));
        cr_assert(s.is_ok(), "%s", s.to_string().c_str());
    }
    cr_expect_gt(pair->a->outstanding(), 0u);
    cr_assert(pair->drive_until(kOps, 20s));
    std::set<std::uint64_t> cookies;
    for (const auto& c : pair->done_a) {
        cr_expect_eq(c.outcome, RailOutcome::Success);
        cookies.insert(c.cookie);
    }
    cr_expect_eq(cookies.size(), kOps, "every op completed exactly once");
    cr_expect_eq(pair->done_a.size(), kOps);
    cr_expect_eq(first_difference(target.data(), src.data(), src.size()), -1);
    cr_expect_eq(pair->a->outstanding(), 0u);
}

// Both sides initiate at once: each rail is initiator and target.
Test(tcp_rail_data, both_directions_at_once) {
    auto pair = make_pair();
    cr_assert(pair->ok());
    auto a_mem = pattern(100000, 1), b_mem = pattern(100000, 2);
    const auto a_orig = a_mem, b_orig = b_mem;
    pair->regions_a.add(kKey, a_mem.data(), a_mem.size(), wire::kAccessAll);
    pair->regions_b.add(kKey, b_mem.data(), b_mem.size(), wire::kAccessAll);
    // a writes its second half over b's first half; b writes its second half over a's first half.
    cr_assert(pair->a->post(write_op(1, a_mem.data() + 50000, 50000, addr(b_mem.data()), kKey)).is_ok());
    cr_assert(pair->b->post(write_op(2, b_mem.data() + 50000, 50000, addr(a_mem.data()), kKey)).is_ok());
    cr_assert(pair->drive_until(1));
    for (int i = 0; i < 1000 && pair->done_b.empty(); ++i) pair->drive_until(1, 5ms);
    cr_assert_eq(pair->done_b.size(), 1u);
    cr_expect_eq(pair->done_b[0].outcome, RailOutcome::Success);
    cr_expect_eq(first_difference(b_mem.data(), a_orig.data() + 50000, 50000), -1);
    cr_expect_eq(first_difference(a_mem.data(), b_orig.data() + 50000, 50000), -1);
}

namespace {

// Progresses `rail` until `done` holds `want` completions, waiting on its
// socket between turns; bounded in turns and time.
bool progress_until(TcpRail& rail, std::vector<RailCompletion>& done, std::size_t want,
                    const std::function<void(const RailMessage&)>& on_message = nullptr) {
    for (int round = 0; round < 2000 && done.size() < want; ++round) {
        rail.progress(done, on_message);
        if (done.size() >= want) break;
        pollfd p{rail.wait_fd(), POLLIN, 0};
        ::poll(&p, 1, 5);
    }
    return done.size() >= want;
}

} // namespace

// An Ack alone waits one turn of its rail (the answer the application
// usually posts at once then leaves first, with the Ack in the same
// sendmsg); the turn after, it goes alone. Acks of several sends that
// arrive in one turn go as one (they are cumulative): every send completes.
Test(tcp_rail_data, a_lone_ack_waits_one_turn_then_goes) {
    auto pair = make_pair();
    cr_assert(pair->ok());
    const auto payload = pattern(100, 3);
    for (std::uint64_t i = 1; i <= 3; ++i) cr_assert(pair->a->post(send_op(i, payload.data(), payload.size())).is_ok());
    std::size_t got = 0;
    auto on_b = [&](const RailMessage&) { ++got; };
    for (int round = 0; round < 2000 && got < 3; ++round) {
        pair->b->progress(pair->done_b, on_b);
        if (got < 3) {
            pollfd p{pair->b->wait_fd(), POLLIN, 0};
            ::poll(&p, 1, 5);
        }
    }
    cr_assert_eq(got, 3u, "the sends never arrived");
    // Held: queued, so the rail is not idle and a sleeping driver waits for POLLOUT.
    cr_expect(pair->b->wants_write(), "the ack went out in the turn that received the sends");
    cr_expect_not(pair->b->idle_unless_readable(SteadyClock::instance().now()));
    pair->b->progress(pair->done_b, on_b);  // the next turn sends it
    cr_expect_not(pair->b->wants_write());
    cr_assert(progress_until(*pair->a, pair->done_a, 3), "the held ack never reached the sender");
    for (const auto& c : pair->done_a) cr_expect_eq(c.outcome, RailOutcome::Success);
    cr_expect_eq(pair->a->outstanding(), 0u);
    // Nothing left to do on either side: only arriving bytes would give work.
    pair->a->progress(pair->done_a, nullptr);
    cr_expect(pair->a->idle_unless_readable(SteadyClock::instance().now()));
    cr_expect(pair->b->idle_unless_readable(SteadyClock::instance().now()));
}

// The answer to a message carries the ack of it: b's post sends both, and
// a's send completes without another turn of b.
Test(tcp_rail_data, an_answer_carries_the_held_ack) {
    auto pair = make_pair();
    cr_assert(pair->ok());
    const auto ping = pattern(8, 4), pong = pattern(8, 5);
    cr_assert(pair->a->post(send_op(1, ping.data(), ping.size())).is_ok());
    std::size_t got = 0;
    auto on_b = [&](const RailMessage&) { ++got; };
    for (int round = 0; round < 2000 && got < 1; ++round) {
        pair->b->progress(pair->done_b, on_b);
        if (got < 1) {
            pollfd p{pair->b->wait_fd(), POLLIN, 0};
            ::poll(&p, 1, 5);
        }
    }
    cr_assert_eq(got, 1u, "the message never arrived");
    cr_assert(pair->b->post(send_op(2, pong.data(), pong.size())).is_ok());
    std::size_t answers = 0;
    auto on_a = [&](const RailMessage&) { ++answers; };
    cr_assert(progress_until(*pair->a, pair->done_a, 1, on_a), "the ack did not come with the answer");
    cr_expect_eq(pair->done_a[0].cookie, 1u);
    cr_expect_eq(pair->done_a[0].outcome, RailOutcome::Success);
    for (int round = 0; round < 2000 && answers < 1; ++round) pair->a->progress(pair->done_a, on_a);
    cr_expect_eq(answers, 1u);
}

namespace {

// Bounded: until `fd` holds at least `bytes` unread (the frames arrived
// whole before the rail reads them), progressing `sender` meanwhile.
bool arrived_whole(int fd, std::size_t bytes, TcpRail& sender, std::vector<RailCompletion>& done) {
    for (int round = 0; round < 400; ++round) {
        int unread = 0;
        if (::ioctl(fd, FIONREAD, &unread) == 0 && static_cast<std::size_t>(unread) >= bytes) return true;
        sender.progress(done, nullptr);
        ::usleep(5000);
    }
    return false;
}

} // namespace

// Large Writes and ReadResponses that are all in the receive buffer at once
// (one read took them whole, and what follows them) are copied once to
// their place; every byte lands, and nothing around it is touched.
Test(tcp_rail_data, large_frames_read_whole_land_byte_exact) {
    auto pair = make_pair();
    cr_assert(pair->ok());
    // Above the direct receive's minimum; with a small write behind it the
    // whole still fits a socket's default receive buffer unread.
    constexpr std::size_t n = 70000, small = 1000;
    std::vector<std::uint8_t> target(2 * n, 0xEE);
    pair->regions_b.add(kKey, target.data(), target.size(), wire::kAccessAll);
    const auto first = pattern(n, 21), second = pattern(small, 22);
    cr_assert(pair->a->post(write_op(1, first.data(), n, addr(target.data()) + 7, kKey)).is_ok());
    cr_assert(pair->a->post(write_op(2, second.data(), small, addr(target.data()) + n + 11, kKey)).is_ok());
    // Each a header, the Write's 21 bytes of fixed fields and the data.
    cr_assert(arrived_whole(pair->b->wait_fd(), 2 * (wire::kHeaderSize + 21) + n + small, *pair->a, pair->done_a),
              "the writes never arrived");
    cr_assert(pair->drive_until(2), "the writes never completed");
    for (const auto& c : pair->done_a) cr_expect_eq(c.outcome, RailOutcome::Success, "%s", c.status.to_string().c_str());
    cr_expect_eq(first_difference(target.data() + 7, first.data(), n), -1, "the large write");
    cr_expect_eq(first_difference(target.data() + n + 11, second.data(), small), -1, "the write behind it");
    for (std::size_t i = 0; i < 7; ++i) cr_assert_eq(target[i], 0xEE);
    for (std::size_t i = 7 + n; i < n + 11; ++i) cr_assert_eq(target[i], 0xEE);
    for (std::size_t i = n + 11 + small; i < target.size(); ++i) cr_assert_eq(target[i], 0xEE);

    // A read whose answer is all there before the reader looks.
    std::vector<std::uint8_t> local(n + 16, 0x11);
    cr_assert(pair->a->post(read_op(3, local.data() + 5, n, addr(target.data()) + 7, kKey)).is_ok());
    std::vector<RailCompletion> none;
    cr_assert(arrived_whole(pair->b->wait_fd(), 1, *pair->a, none), "the read request never arrived");
    for (int round = 0; round < 400 && (pair->b->wants_write() || pair->b->outstanding() > 0 || round < 2); ++round)
        pair->b->progress(pair->done_b, nullptr);
    cr_assert(arrived_whole(pair->a->wait_fd(), wire::kHeaderSize + 5 + n, *pair->b, pair->done_b),
              "the read answer never arrived");
    cr_assert(pair->drive_until(3), "the read never completed");
    cr_expect_eq(pair->done_a.back().cookie, 3u);
    cr_expect_eq(pair->done_a.back().outcome, RailOutcome::Success, "%s", pair->done_a.back().status.to_string().c_str());
    cr_expect_eq(first_difference(local.data() + 5, first.data(), n), -1, "read");
    for (std::size_t i = 0; i < 5; ++i) cr_assert_eq(local[i], 0x11);
    for (std::size_t i = 5 + n; i < local.size(); ++i) cr_assert_eq(local[i], 0x11, "the read wrote past its length");
}

namespace {

// Drives the pair until `count` reads into `local` completed, then checks
// that each completed once, successfully, and that every byte is source's.
void expect_reads_done(RailPair& pair, std::size_t count, const std::vector<std::uint8_t>& local,
                       const std::vector<std::uint8_t>& source) {
    cr_assert(pair.drive_until(count), "the reads never completed");
    std::set<std::uint64_t> cookies;
    for (const auto& c : pair.done_a) {
        cr_expect_eq(c.outcome, RailOutcome::Success, "%s", c.status.to_string().c_str());
        cookies.insert(c.cookie);
    }
    cr_expect_eq(cookies.size(), count, "each read completes once");
    cr_expect_eq(first_difference(local.data(), source.data(), local.size()), -1, "the reads' bytes");
}

} // namespace

// A turn answers a bounded share of the reads waiting on its socket (4 MiB),
// so that one rail's requests never hold the turn from the other rails' for
// long. The rest stays in the rail, which says so (its descriptor will not:
// the driver must not sleep on it), and the next turns answer it with no new
// byte arriving. Every byte read back is checked.
Test(tcp_rail_data, a_turn_answers_a_bounded_share_of_waiting_reads) {
    auto pair = make_pair();
    cr_assert(pair->ok());
    constexpr std::size_t piece = 128 * 1024, count = 40;  // 5 MiB
    constexpr std::size_t request_size = wire::kHeaderSize + 4 + 8 + 4;  // rkey, address, length
    const auto source = pattern(piece * count, 31);
    pair->regions_b.add(kKey, const_cast<std::uint8_t*>(source.data()), source.size(), wire::kAccessAll);
    std::vector<std::uint8_t> local(piece * count, 0x11);
    for (std::size_t i = 0; i < count; ++i)
        cr_assert(pair->a->post(read_op(i + 1, local.data() + i * piece, piece, addr(source.data()) + i * piece, kKey))
                      .is_ok());
    std::vector<RailCompletion> none;
    cr_assert(arrived_whole(pair->b->wait_fd(), count * request_size, *pair->a, none), "the requests never arrived");
    cr_assert(none.empty());
    pair->b->progress(pair->done_b, nullptr);
    cr_expect(pair->b->input_waiting(), "one turn answered all %zu reads of %zu bytes", count, piece);
    cr_expect_not(pair->b->idle_unless_readable(SteadyClock::instance().now()),
                  "a rail with requests left looks idle");
    int turns = 1;
    for (; pair->b->input_waiting() && turns < 64; ++turns) pair->b->progress(pair->done_b, nullptr);
    cr_expect_not(pair->b->input_waiting(), "requests still left after %d turns", turns);
    expect_reads_done(*pair, count, local, source);
}

// Between begin_posts() and end_posts() a rail holds what it is given, so
// that the pieces of one request leave in one sendmsg: nothing reaches the
// peer before end_posts(), everything after it, and every read completes
// once with every byte right.
Test(tcp_rail_data, posts_between_begin_and_end_leave_together) {
    auto pair = make_pair();
    cr_assert(pair->ok());
    constexpr std::size_t piece = 4096, count = 3;
    constexpr std::size_t request_size = wire::kHeaderSize + 4 + 8 + 4;
    const auto source = pattern(piece * count, 41);
    pair->regions_b.add(kKey, const_cast<std::uint8_t*>(source.data()), source.size(), wire::kAccessAll);
    std::vector<std::uint8_t> local(piece * count, 0x11);
    pair->a->begin_posts();
    for (std::size_t i = 0; i < count; ++i)
        cr_assert(pair->a->post(read_op(i + 1, local.data() + i * piece, piece, addr(source.data()) + i * piece, kKey))
                      .is_ok());
    ::usleep(20000);  // time for anything sent to arrive
    int unread = -1;
    cr_assert_eq(::ioctl(pair->b->wait_fd(), FIONREAD, &unread), 0);
    cr_expect_eq(unread, 0, "%d bytes reached the peer before end_posts()", unread);
    pair->a->end_posts();
    std::vector<RailCompletion> none;
    cr_assert(arrived_whole(pair->b->wait_fd(), count * request_size, *pair->a, none),
              "the requests did not all arrive after end_posts()");
    expect_reads_done(*pair, count, local, source);
}
