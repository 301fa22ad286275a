// Who drives the engine (engine_drive.cpp): with caller_progress an
// application thread inside wait()/poll() runs the progress turns itself,
// so callbacks run on it; the progress thread takes over when the
// application stops calling in; a callback may post while its thread
// drives; several application threads may drive one engine in turn; a
// handshake that stalls never blocks an application's call; a connection
// accepted while the application sleeps in wait() is served at once; a
// poll that only takes completions already queued still counts as the
// application driving; what a poll returned is counted in rail_stats() at
// once.
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "../../support/tcp_engine_pair.h"
#include "wire/frame_codec.h"

using namespace tent;
using namespace tent::test;
using Steady = std::chrono::steady_clock;

namespace {

// Calls e.wait() (which drives e) until done() or the time limit.
template <typename Done>
bool drive_until(Engine& e, Done done, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    const auto deadline = Steady::now() + limit;
    while (!done()) {
        if (Steady::now() > deadline) return false;
        (void)e.wait(std::chrono::milliseconds(2));
        std::vector<EngineCompletion> sink;
        (void)e.poll(sink, 64);
    }
    return true;
}

struct Arrivals {
    std::mutex mu;
    std::vector<std::vector<std::uint8_t>> messages;
    std::vector<std::thread::id> threads;

    void add(std::span<const std::uint8_t> m) {
        std::lock_guard lock(mu);
        messages.emplace_back(m.begin(), m.end());
        threads.push_back(std::this_thread::get_id());
    }
    std::size_t count() {
        std::lock_guard lock(mu);
        return messages.size();
    }
};

Config with_caller_progress(bool on) {
    Config c = loopback_config();
    (void)c.set(Knob::CallerProgress, on ? "true" : "false", api_source());
    return c;
}

// Waits on e for a while, so that e's progress thread has seen the
// application drive and stepped aside.
void drive_for_a_while(Engine& e, std::chrono::milliseconds how_long = std::chrono::milliseconds(30)) {
    const auto until = Steady::now() + how_long;
    while (Steady::now() < until) (void)e.wait(std::chrono::milliseconds(2));
}

// A message of `size` patterned bytes, posted from a to b.
std::vector<std::uint8_t> send_one(EnginePair& p, std::size_t size, unsigned seed) {
    std::vector<std::uint8_t> msg(size);
    fill(msg, seed);
    cr_assert(p.a->post_send(p.a_to_b, msg.data(), msg.size(), with_cookie(1)).is_ok());
    return msg;
}

// b's main thread waits on b (driving it or not, per the configuration)
// while a sends one message; returns the thread b's callback ran on.
std::thread::id callback_thread_while_waiting(bool caller_progress) {
    EnginePair p(1, {0}, with_caller_progress(caller_progress));
    cr_assert(p.a && p.b && p.a_to_b);
    Arrivals got;
    p.b->set_recv_callback([&](PeerId, std::span<const std::uint8_t> m) { got.add(m); });
    drive_for_a_while(*p.b);
    const auto msg = send_one(p, 3000, 11);
    cr_assert(drive_until(*p.b, [&] { return got.count() == 1; }), "the message did not arrive");
    std::lock_guard lock(got.mu);
    cr_expect(got.messages[0] == msg);
    return got.threads[0];
}

} // namespace

Test(engine_drive, callbacks_run_on_the_thread_that_waits) {
    cr_expect(callback_thread_while_waiting(true) == std::this_thread::get_id(),
              "with caller_progress the waiting thread delivers the message");
}

Test(engine_drive, without_caller_progress_callbacks_run_on_the_progress_thread) {
    cr_expect(callback_thread_while_waiting(false) != std::this_thread::get_id(),
              "with caller_progress=false only the progress thread delivers");
}

Test(engine_drive, the_progress_thread_takes_over_when_the_application_stops_calling) {
    EnginePair p(1, {0});
    cr_assert(p.a && p.b && p.a_to_b);
    Arrivals got;
    p.b->set_recv_callback([&](PeerId, std::span<const std::uint8_t> m) { got.add(m); });
    drive_for_a_while(*p.b);
    // Nobody calls b from here on: its progress thread must deliver.
    const auto msg = send_one(p, 5000, 12);
    const auto deadline = Steady::now() + std::chrono::seconds(5);
    while (got.count() == 0 && Steady::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    cr_assert_eq(got.count(), 1u, "the message was not delivered without the application calling in");
    std::lock_guard lock(got.mu);
    cr_expect(got.messages[0] == msg);
    cr_expect(got.threads[0] != std::this_thread::get_id());
}

Test(engine_drive, a_callback_may_post_while_its_thread_drives) {
    // b echoes every message from inside its receive callback, which runs
    // on the thread waiting on b: the post must neither deadlock on the
    // drive lock that thread holds nor be lost.
    EnginePair p(2, {0, 1});
    cr_assert(p.a && p.b && p.a_to_b);
    std::deque<std::vector<std::uint8_t>> echoes;  // stable until the echo's completion
    std::atomic<int> echo_errors{0};
    p.b->set_recv_callback([&](PeerId from, std::span<const std::uint8_t> m) {
        echoes.emplace_back(m.begin(), m.end());
        if (!p.b->post_send(from, echoes.back().data(), echoes.back().size(), with_cookie(echoes.size())).is_ok())
            ++echo_errors;
    });
    Arrivals back;
    p.a->set_recv_callback([&](PeerId, std::span<const std::uint8_t> m) { back.add(m); });
    const int kMessages = 100;
    std::vector<std::vector<std::uint8_t>> msgs(kMessages);
    for (int i = 0; i < kMessages; ++i) {
        msgs[i].resize(1 + (i * 733) % 9000);  // up to 3 fragments of 4 KiB
        fill(msgs[i], 300 + i);
        cr_assert(p.a->post_send(p.a_to_b, msgs[i].data(), msgs[i].size(), with_cookie(i)).is_ok());
    }
    cr_assert(drive_until(*p.b, [&] { return back.count() == kMessages; }), "%zu of %d echoes came back",
              back.count(), kMessages);
    cr_expect_eq(echo_errors.load(), 0);
    std::lock_guard lock(back.mu);
    for (int i = 0; i < kMessages; ++i) cr_expect(back.messages[i] == msgs[i], "echo %d out of order or corrupt", i);
}

Test(engine_drive, several_application_threads_drive_one_engine_in_turn) {
    // Three threads post writes and wait on the same engine at once; the
    // drive lock hands the turns around, every write completes once and
    // every byte arrives.
    EnginePair p(2, {0, 2});
    cr_assert(p.a && p.b && p.a_to_b);
    const int kThreads = 3, kWrites = 60;
    const std::size_t kSize = 40000;  // above the striping threshold: striped over both rails
    std::vector<std::uint8_t> src(kThreads * kWrites * kSize), dst(src.size(), 0);
    std::vector<std::uint8_t> pattern(src.size());
    fill(pattern, 77);
    src = pattern;
    auto rs = p.a->register_memory(src.data(), src.size(), wire::kAccessAll);
    auto rd = p.b->register_memory(dst.data(), dst.size(), wire::kAccessAll);
    cr_assert(rs.is_ok() && rd.is_ok());
    const auto remote = handle_bytes(**rd);
    std::atomic<int> completed{0}, failed{0}, post_errors{0};
    std::mutex cookies_mu;
    std::vector<int> seen(kThreads * kWrites, 0);
    auto worker = [&](int t) {
        for (int i = 0; i < kWrites; ++i) {
            const std::size_t off = (static_cast<std::size_t>(t) * kWrites + i) * kSize;
            if (!p.a->post_write(p.a_to_b, src.data() + off, kSize, remote,
                                 reinterpret_cast<std::uint64_t>(dst.data() + off), with_cookie(t * kWrites + i))
                     .is_ok())
                ++post_errors;
        }
        const auto deadline = Steady::now() + std::chrono::seconds(20);
        std::vector<EngineCompletion> out;
        while (completed.load() < kThreads * kWrites && Steady::now() < deadline) {
            (void)p.a->wait(std::chrono::milliseconds(5));
            out.clear();
            (void)p.a->poll(out, 16);
            for (const auto& c : out) {
                if (!c.status.is_ok()) ++failed;
                std::lock_guard lock(cookies_mu);
                if (c.cookie < seen.size()) ++seen[c.cookie];
            }
            completed += static_cast<int>(out.size());
        }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
    for (auto& th : threads) th.join();
    cr_assert_eq(post_errors.load(), 0);
    cr_assert_eq(completed.load(), kThreads * kWrites);
    cr_expect_eq(failed.load(), 0);
    for (std::size_t i = 0; i < seen.size(); ++i) cr_expect_eq(seen[i], 1, "write %zu completed %d times", i, seen[i]);
    cr_expect(dst == pattern, "every byte written");
}

Test(engine_drive, a_stalled_handshake_never_blocks_the_application) {
    // A client opens b's control listener and sends nothing: serving it
    // blocks for connect_timeout_ms. That must happen on b's progress
    // thread, not inside the application's wait() that drives b.
    Config c = loopback_config();
    (void)c.set(Knob::ConnectTimeoutMs, "1500", api_source());
    EnginePair p(1, {0}, c);
    cr_assert(p.a && p.b && p.a_to_b);
    auto frame = wire::decode_frame(p.b->address());
    cr_assert(frame.is_ok());
    const auto* blob = std::get_if<wire::AddressBlob>(&frame->body);
    cr_assert(blob && !blob->tcp.empty() && blob->tcp[0].family == 4);
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(blob->tcp[0].port);
    std::memcpy(&sa.sin_addr, blob->tcp[0].addr.data(), 4);
    drive_for_a_while(*p.b);  // the application drives b
    cr_assert_eq(::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
    auto longest = std::chrono::nanoseconds::zero();
    const auto end = Steady::now() + std::chrono::milliseconds(2500);
    while (Steady::now() < end) {
        const auto t0 = Steady::now();
        (void)p.b->wait(std::chrono::milliseconds(2));
        std::vector<EngineCompletion> sink;
        (void)p.b->poll(sink, 8);
        longest = std::max(longest, Steady::now() - t0);
    }
    ::close(fd);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(longest).count();
    cr_expect_lt(ms, 700, "a wait() of 2 ms took %lld ms: the application served the handshake", (long long)ms);
    // And b still serves its peer afterwards.
    Arrivals got;
    p.b->set_recv_callback([&](PeerId, std::span<const std::uint8_t> m) { got.add(m); });
    const auto msg = send_one(p, 100, 13);
    cr_assert(drive_until(*p.b, [&] { return got.count() == 1; }));
    std::lock_guard lock(got.mu);
    cr_expect(got.messages[0] == msg);
}

Test(engine_drive, a_connection_accepted_while_the_application_sleeps_in_wait_is_served_at_once) {
    // b's application thread sits in one long wait() on TCP rails (a
    // driver with descriptors to watch sleeps up to 100 ms at a time); a
    // peer connects, which b's progress thread accepts, and sends at once.
    // The sleeper must look at the new connection's rails then, not when
    // its sleep ends.
    const Config config = tcp_pair_config();
    auto b = make_tcp_engine(config);
    std::vector<std::uint8_t> got(64, 0), msg(64);
    fill(msg, 21);
    cr_assert(b->post_recv(got.data(), got.size(), 5).is_ok());
    Steady::time_point woke{};
    std::thread waiter([&] {
        const auto deadline = Steady::now() + std::chrono::seconds(10);
        while (b->wait(std::chrono::seconds(3)) == 0 && Steady::now() < deadline) {
        }
        woke = Steady::now();
    });
    // Long enough for the waiter to be asleep and the progress thread to
    // have stepped aside for it.
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    auto a = make_tcp_engine(config);
    auto peer = a->connect(b->address());
    cr_assert(peer.is_ok(), "%s", peer.status().to_string().c_str());
    // From the connection's set-up on: the handshake's own time (tens of
    // milliseconds in an instrumented build on a loaded machine) is not
    // what is measured.
    const auto t0 = Steady::now();
    cr_assert(a->post_send(*peer, msg.data(), msg.size(), with_cookie(1)).is_ok());
    waiter.join();
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(woke - t0).count();
    cr_expect_lt(ms, 40, "the message waited %lld ms for the sleeping driver", (long long)ms);
    std::vector<EngineCompletion> done;
    cr_assert_eq(b->poll(done, 8), 1u);
    cr_expect(done[0].status.is_ok());
    cr_expect_eq(done[0].cookie, 5u);
    cr_expect(got == msg, "every byte as sent");
    cr_expect_eq(wait_completions(*a, 1).size(), 1u);
}

// Once the progress thread had taken over (the application away a grace),
// a poll that found completions queued took them without a turn and did
// not count as the application driving: with work always in flight the
// progress thread kept the engine while the application polled (perftest's
// ib_write_bw under the interposer lost bandwidth so). Now such a poll
// holds the progress thread off for a grace: a message arriving right
// after it waits for the application's next poll. One attempt of three
// must show it (a machine that stalls this thread for a grace lets the
// progress thread deliver, rightly); before, none did.
Test(engine_drive, a_poll_that_takes_queued_completions_counts_as_the_application_driving, .timeout = 60) {
    EnginePair p(1, {0});
    cr_assert(p.a && p.b && p.a_to_b);
    auto b_to_a = p.b->connect(p.a->address());
    cr_assert(b_to_a.is_ok(), "%s", b_to_a.status().to_string().c_str());
    Arrivals got;
    p.a->set_recv_callback([&](PeerId, std::span<const std::uint8_t> m) { got.add(m); });
    std::vector<std::uint8_t> out(2000);
    fill(out, 21);
    bool held_off = false;
    for (int attempt = 0; attempt < 3 && !held_off; ++attempt) {
        // Nobody polls a for a while: its progress thread takes over and
        // completes a's send, which then waits in a's queue.
        cr_assert(p.a->post_send(p.a_to_b, out.data(), out.size(), with_cookie(attempt)).is_ok());
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        // wait() with no time to wait only counts what is queued (bounded).
        for (int i = 0; i < 5000 && p.a->wait(std::chrono::milliseconds(0)) == 0; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        std::vector<EngineCompletion> done;
        cr_assert_eq(p.a->poll(done, 8), 1u, "a's send did not complete while the progress thread drove");
        cr_expect(done[0].status.is_ok());
        // That poll ran no turn; a message from b arrives right after it.
        std::vector<std::uint8_t> msg(3000);
        fill(msg, 30 + attempt);
        const std::size_t before = got.count();
        cr_assert(p.b->post_send(*b_to_a, msg.data(), msg.size(), with_cookie(100 + attempt)).is_ok());
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        const auto deadline = Steady::now() + std::chrono::seconds(5);
        while (got.count() == before && Steady::now() < deadline) {
            done.clear();
            (void)p.a->poll(done, 8);
        }
        cr_assert_eq(got.count(), before + 1, "b's message did not arrive");
        std::lock_guard lock(got.mu);
        cr_assert(got.messages.back() == msg, "b's message differs");
        held_off = got.threads.back() == std::this_thread::get_id();
        // b's send completes on b; take it so the next attempt starts clean.
        (void)wait_completions(*p.b, 1, std::chrono::seconds(5));
    }
    cr_expect(held_off, "each time the progress thread delivered the message: the poll did not hold it off");
}

// A turn that hands completions to an application thread publishes them
// before it refreshes the rail table (publish_turn): whatever poll()
// returned is still counted when the program asks rail_stats() next.
Test(engine_drive, what_a_poll_returned_is_counted_in_the_rail_statistics_at_once, .timeout = 60) {
    EnginePair p(1, {0}, with_caller_progress(true));
    cr_assert(p.a && p.b && p.a_to_b);
    Arrivals got;
    p.b->set_recv_callback([&](PeerId, std::span<const std::uint8_t> m) { got.add(m); });
    std::thread receiver([&] { (void)drive_until(*p.b, [&] { return got.count() == 200; }); });
    std::uint64_t sent_bytes = 0;
    for (unsigned i = 0; i < 200; ++i) {
        std::vector<std::uint8_t> msg(1 + i);
        fill(msg, 40 + i);
        cr_assert(p.a->post_send(p.a_to_b, msg.data(), msg.size(), with_cookie(i)).is_ok());
        std::vector<EngineCompletion> done;
        const auto deadline = Steady::now() + std::chrono::seconds(10);
        // a's own turns, back to back as a ping-pong's: wait_completions()
        // sleeps between polls, and a turn 50 us after the last refresh
        // refreshes the table itself (publish_turn), leaving nothing to catch up.
        while (done.empty() && Steady::now() < deadline) (void)p.a->poll(done, 1);
        cr_assert_eq(done.size(), 1u, "send %u did not complete", i);
        cr_assert(done[0].status.is_ok());
        sent_bytes += msg.size();
        std::uint64_t ops = 0, bytes = 0;
        for (const RailStats& s : p.a->rail_stats()) {
            ops += s.ops;
            bytes += s.bytes;
        }
        cr_assert_eq(ops, i + 1, "after %u completions the rails counted %llu operations", i + 1,
                     static_cast<unsigned long long>(ops));
        cr_assert_eq(bytes, sent_bytes, "after send %u: %llu bytes counted, %llu sent", i,
                     static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(sent_bytes));
    }
    receiver.join();
    cr_expect_eq(got.count(), 200u);
}
