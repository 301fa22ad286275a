// SendReassembler: messages released whole, in sequence order, exactly once,
// whatever order and multiplicity their fragments arrive in.
#include <criterion/criterion.h>

#include <algorithm>
#include <random>
#include <vector>

#include "engine/send_reassembler.h"

using namespace tent;

namespace {

std::vector<std::uint8_t> pattern(std::uint64_t seq, std::size_t n) {
    std::vector<std::uint8_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(seq * 31 + i * 7);
    return v;
}

struct Frag {
    SendHeader h;
    std::vector<std::uint8_t> data;
};

std::vector<Frag> fragments(std::uint64_t seq, const std::vector<std::uint8_t>& msg, std::size_t frag) {
    std::vector<Frag> out;
    std::size_t off = 0;
    do {
        std::size_t n = std::min(frag, msg.size() - off);
        out.push_back({{seq, off, msg.size()}, std::vector<std::uint8_t>(msg.begin() + off, msg.begin() + off + n)});
        off += n;
    } while (off < msg.size());
    return out;
}

// The next message is ready and is `expected`; then releases it.
void expect_released(SendReassembler& r, const std::vector<std::uint8_t>& expected) {
    cr_assert_not_null(r.ready());
    cr_expect(*r.ready() == expected);
    r.pop_ready();
}

} // namespace

Test(send_reassembler, releases_in_order_exactly_once_under_shuffle_and_duplicates) {
    std::vector<std::vector<std::uint8_t>> msgs;
    std::vector<Frag> all;
    for (std::uint64_t seq = 1; seq <= 40; ++seq) {
        msgs.push_back(pattern(seq, (seq * 977) % 5000));  // includes an empty message (seq 0 mod)
        for (auto& f : fragments(seq, msgs.back(), 300)) all.push_back(f);
    }
    std::vector<Frag> dup(all.begin(), all.begin() + all.size() / 3);  // replayed fragments
    all.insert(all.end(), dup.begin(), dup.end());
    std::mt19937 rng(42);
    std::shuffle(all.begin(), all.end(), rng);

    SendReassembler r;
    std::vector<std::vector<std::uint8_t>> out;
    for (const auto& f : all) {
        cr_assert(r.add(f.h, f.data).is_ok());
        while (const auto* m = r.ready()) {
            out.push_back(*m);
            r.pop_ready();
        }
    }
    cr_assert_eq(out.size(), msgs.size());
    for (std::size_t i = 0; i < msgs.size(); ++i) cr_expect(out[i] == msgs[i], "message %zu differs", i + 1);
    cr_expect_eq(r.last_delivered(), 40u);
    cr_expect_eq(r.pending_messages(), 0u);
    // A late replay of an already released message is dropped.
    cr_expect(r.add({3, 0, msgs[2].size()}, msgs[2]).is_ok());
    cr_expect_null(r.ready());
}

Test(send_reassembler, later_message_waits_for_earlier) {
    SendReassembler r;
    auto m1 = pattern(1, 10), m2 = pattern(2, 10);
    cr_assert(r.add({2, 0, 10}, m2).is_ok());
    cr_expect_null(r.ready());
    cr_assert(r.add({1, 0, 10}, m1).is_ok());
    expect_released(r, m1);
    expect_released(r, m2);
}

// The engine delivers a whole in-order message from the rail's buffer
// (next_whole, release_next) and hands the reassembler only the rest.
Test(send_reassembler, whole_next_message_may_skip_the_copy_exactly_once) {
    SendReassembler r(1000);
    auto m1 = pattern(1, 10), m2 = pattern(2, 10), m3 = pattern(3, 30);
    cr_expect(r.next_whole({1, 0, 10}, 10));
    cr_expect_not(r.next_whole({2, 0, 10}, 10), "not next in order");
    cr_expect_not(r.next_whole({1, 0, 20}, 10), "a fragment of a longer message");
    cr_expect_not(r.next_whole({1, 5, 15}, 10), "not the first fragment");
    cr_expect_not(r.next_whole({1, 0, 2000}, 2000), "over the limit: add() rejects it");
    r.release_next();  // message 1 delivered by the caller
    cr_expect_eq(r.last_delivered(), 1u);
    // Its replay is a duplicate, for add() and for the direct path alike.
    cr_expect_not(r.next_whole({1, 0, 10}, 10));
    cr_expect(r.add({1, 0, 10}, m1).is_ok());
    cr_expect_null(r.ready());
    // With message 3 held, message 2 goes through add(), in order.
    cr_assert(r.add({3, 0, 30}, m3).is_ok());
    cr_expect_not(r.next_whole({2, 0, 10}, 10), "a later message is held");
    cr_assert(r.add({2, 0, 10}, m2).is_ok());
    expect_released(r, m2);
    expect_released(r, m3);
    cr_expect_eq(r.last_delivered(), 3u);
    cr_expect(r.next_whole({4, 0, 0}, 0), "an empty message is whole");
}

// A message its sender gave up on (wire::SendAbandoned) no longer holds up
// the later ones: what arrived of it goes, its late fragments are
// duplicates, and a message given up before the one being waited for is
// skipped once that one is released (on both release paths).
Test(send_reassembler, abandoned_message_no_longer_holds_up_later_ones) {
    SendReassembler r;
    auto m2 = pattern(2, 10), m3 = pattern(3, 10), m4 = pattern(4, 20), m6 = pattern(6, 10);
    cr_assert(r.add({1, 0, 10}, pattern(1, 10)).is_ok());
    expect_released(r, pattern(1, 10));
    // Message 2 half arrived, 3 whole: both wait for 2.
    cr_assert(r.add({2, 0, 10}, std::vector<std::uint8_t>(m2.begin(), m2.begin() + 5)).is_ok());
    cr_assert(r.add({3, 0, 10}, m3).is_ok());
    cr_expect_null(r.ready());
    cr_assert(r.abandon(2).is_ok());
    cr_expect_eq(r.last_delivered(), 2u, "message 2 counts as passed");
    expect_released(r, m3);
    // Its other half, late: a duplicate, never released.
    cr_assert(r.add({2, 5, 10}, std::vector<std::uint8_t>(m2.begin() + 5, m2.end())).is_ok());
    cr_expect_null(r.ready());
    cr_expect_not(r.next_whole({2, 0, 10}, 10));
    // Message 5 given up before 4 arrived: 4 is released, then 5 is passed.
    cr_assert(r.abandon(5).is_ok());
    cr_assert(r.add({6, 0, 10}, m6).is_ok());
    cr_expect_null(r.ready(), "message 4 is still to come");
    cr_assert(r.add({4, 0, 20}, m4).is_ok());
    expect_released(r, m4);
    expect_released(r, m6);
    cr_expect_eq(r.last_delivered(), 6u);
    // The direct path passes a given-up message the same way.
    cr_assert(r.abandon(8).is_ok());
    cr_assert(r.next_whole({7, 0, 10}, 10));
    r.release_next();
    cr_expect_eq(r.last_delivered(), 8u);
    cr_expect(r.next_whole({9, 0, 10}, 10));
    // Giving up on a message already released changes nothing.
    cr_expect(r.abandon(3).is_ok());
    cr_expect_eq(r.last_delivered(), 8u);
}

Test(send_reassembler, abandon_far_ahead_is_refused) {
    SendReassembler r;
    cr_expect_not(r.abandon(SendReassembler::kMaxAbandonedAhead + 2).is_ok());
    cr_expect(r.abandon(SendReassembler::kMaxAbandonedAhead).is_ok());
    cr_expect_eq(r.last_delivered(), 0u, "nothing passed while message 1 is still to come");
}

Test(send_reassembler, rejects_inconsistent_fragments) {
    SendReassembler r(1000);
    std::vector<std::uint8_t> d(10, 1);
    cr_expect_not(r.add({1, 995, 1000}, d).is_ok(), "fragment past the end");
    cr_expect_not(r.add({1, 0, 2000}, d).is_ok(), "message over the limit");
    cr_expect(r.add({1, 0, 100}, d).is_ok());
    cr_expect_not(r.add({1, 10, 200}, d).is_ok(), "length disagrees");
    cr_expect_not(r.add({2, 0, 100}, {}).is_ok(), "empty fragment of a non-empty message");
}

Test(send_header, round_trip_and_rejects) {
    SendHeader h{7, 128, 4096};
    auto bytes = encode_send_header(h);
    auto back = decode_send_header(bytes);
    cr_assert(back.is_ok());
    cr_expect(*back == h);
    bytes[0] ^= 1;
    cr_expect_not(decode_send_header(bytes).is_ok());
    auto zero = encode_send_header({0, 0, 0});
    cr_expect_not(decode_send_header(zero).is_ok());
    auto past = encode_send_header({1, 10, 5});
    cr_expect_not(decode_send_header(past).is_ok());
    cr_expect_not(decode_send_header(std::span(bytes).first(10)).is_ok());
}
