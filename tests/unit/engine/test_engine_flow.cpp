// Flow control of messages between two engines (engine/send_flow.h): a fast
// sender to a receiver whose application takes its messages slowly keeps
// the receiver's memory within send_window plus one message; the sender's
// messages beyond it wait (they neither fail nor get lost); every message
// arrives once, in order, every byte checked.
#include <criterion/criterion.h>
#include <malloc.h>

#include <chrono>
#include <thread>

#include "engine/send_flow.h"
#include "engine_pair.h"

using namespace tent;
using namespace tent::test;

namespace {

constexpr int kMessages = 256;
constexpr std::uint64_t kLength = 64 * 1024;  // 16 MiB in all
constexpr std::uint64_t kWindow = 256 * 1024;

// Bytes the allocator has handed out (every arena, and mmap'd blocks).
long heap_in_use() {
    struct mallinfo2 m = mallinfo2();
    return static_cast<long>(m.uordblks + m.hblkhd);
}

} // namespace

Test(engine_flow, fast_sender_slow_receiver_memory_bounded_every_byte_checked, .timeout = 60) {
    Config config = loopback_config();
    (void)config.set(Knob::SendWindow, std::to_string(kWindow), api_source());
    EnginePair p(2, {0, 1}, config);
    cr_assert(p.a && p.b && p.a_to_b);
    std::vector<std::vector<std::uint8_t>> msgs(kMessages, std::vector<std::uint8_t>(kLength));
    for (int i = 0; i < kMessages; ++i) fill(msgs[i], 500 + i);
    std::vector<std::uint8_t> buf(kLength);
    // One round trip first, so that both engines are past their start-up
    // allocations when the baseline is taken.
    cr_assert(p.b->post_recv(buf.data(), buf.size(), 0).is_ok());
    cr_assert(p.a->post_send(p.a_to_b, msgs[0].data(), kLength, with_cookie(0)).is_ok());
    cr_assert_eq(wait_completions(*p.b, 1).size(), 1u);
    cr_assert_eq(wait_completions(*p.a, 1).size(), 1u);
    const long base = heap_in_use();

    // The sender posts everything at once; the receiver posts no buffer yet.
    for (int i = 0; i < kMessages; ++i)
        cr_assert(p.a->post_send(p.a_to_b, msgs[i].data(), kLength, with_cookie(1 + i)).is_ok());
    // What completes at the sender meanwhile: at most a window's worth (the
    // rest waits for credit). Bounded wait until nothing more completes.
    std::vector<EngineCompletion> sent;
    for (std::size_t before = ~std::size_t{0}; before != sent.size();) {
        before = sent.size();
        auto more = wait_completions(*p.a, kMessages, std::chrono::milliseconds(500));
        sent.insert(sent.end(), more.begin(), more.end());
    }
    const std::size_t window_messages = kWindow / message_weight(kLength) + 1;
    cr_assert_leq(sent.size(), window_messages, "%zu messages completed at the sender with no buffer posted", sent.size());
    long peak = heap_in_use() - base;

    // The application takes one message at a time, checking every byte.
    for (int i = 0; i < kMessages; ++i) {
        std::fill(buf.begin(), buf.end(), 0);
        cr_assert(p.b->post_recv(buf.data(), buf.size(), 1000 + i).is_ok());
        auto got = wait_completions(*p.b, 1);
        cr_assert_eq(got.size(), 1u, "message %d never arrived", i);
        cr_assert(got[0].status.is_ok(), "message %d: %s", i, got[0].status.to_string().c_str());
        cr_assert_eq(got[0].length, kLength);
        cr_assert(buf == msgs[i], "message %d out of order, duplicated or corrupt", i);
        peak = std::max(peak, heap_in_use() - base);
        auto more = wait_completions(*p.a, kMessages, std::chrono::milliseconds(0));
        sent.insert(sent.end(), more.begin(), more.end());
    }
    for (int i = 0; i < 500 && sent.size() < static_cast<std::size_t>(kMessages); ++i) {
        auto more = wait_completions(*p.a, kMessages, std::chrono::milliseconds(10));
        sent.insert(sent.end(), more.begin(), more.end());
    }
    cr_assert_eq(sent.size(), static_cast<std::size_t>(kMessages));
    for (const auto& c : sent) cr_expect(c.status.is_ok(), "a send failed: %s", c.status.to_string().c_str());
    // Nothing more arrives: exactly once.
    cr_assert(p.b->post_recv(buf.data(), buf.size(), 9999).is_ok());
    cr_assert_eq(wait_completions(*p.b, 1, std::chrono::milliseconds(200)).size(), 0u, "a message arrived twice");

    std::printf("engine flow: %d messages of %llu KiB, window %llu KiB: heap grew by %ld KiB at most\n", kMessages,
                (unsigned long long)kLength / 1024, (unsigned long long)kWindow / 1024, peak / 1024);
#ifndef __SANITIZE_ADDRESS__
    // The window, one message and what is in flight on the rails, with room
    // for the engines' own bookkeeping; 16 MiB without flow control.
    cr_expect_leq(peak, static_cast<long>(kWindow + 2 * kLength + (2 << 20)), "the receiver held %ld KiB", peak / 1024);
#endif
}
