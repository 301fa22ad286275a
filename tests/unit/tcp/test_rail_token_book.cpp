// The rail tokens a responder honours: each once, only for its connection
// and rail, only with the right token, only until it expires; a token not
// entered yet is waited for (Busy), a wrong one refused without spending
// the real one, a replayed one refused at once.
#include <criterion/criterion.h>

#include <vector>

#include "transport/tcp/rail_token_book.h"

using namespace tent;
using namespace tent::tcp;
using namespace std::chrono_literals;

namespace tent::tcp {

struct RailTokenBookInspector {
    static std::size_t entries(const RailTokenBook& book) { return book.entries_.size(); }
    static std::size_t records(const RailTokenBook& book) { return book.by_age_.size(); }
};

} // namespace tent::tcp

namespace {

std::size_t entries(const RailTokenBook& book) { return RailTokenBookInspector::entries(book); }
std::size_t records(const RailTokenBook& book) { return RailTokenBookInspector::records(book); }

wire::RailToken token(std::uint16_t rail, std::uint8_t seed) {
    wire::RailToken t;
    t.rail_id = rail;
    t.from_initiator.fill(seed);
    t.from_responder.fill(static_cast<std::uint8_t>(seed + 100));
    return t;
}

const TimePoint t0{};

} // namespace

Test(rail_token_book, a_token_opens_its_own_rail_once) {
    RailTokenBook book(1s);
    const std::vector<wire::RailToken> tokens = {token(1, 1), token(2, 2)};
    cr_expect_eq(book.take(7, 1, tokens[0].from_initiator, t0).status().code(), Code::Busy, "not entered yet");
    book.enter(7, tokens, t0);
    // Another rail's token, another connection's rail: refused.
    cr_expect(!book.take(7, 1, tokens[1].from_initiator, t0).is_ok());
    cr_expect_eq(book.take(8, 1, tokens[0].from_initiator, t0).status().code(), Code::Busy);
    auto mine = book.take(7, 1, tokens[0].from_initiator, t0);
    cr_assert(mine.is_ok(), "a wrong guess does not spend the real token: %s", mine.status().to_string().c_str());
    cr_expect(*mine == tokens[0].from_responder);
    // Replayed: refused at once, not waited for.
    auto again = book.take(7, 1, tokens[0].from_initiator, t0);
    cr_expect(!again.is_ok());
    cr_expect_neq(again.status().code(), Code::Busy);
    cr_expect(again.status().message().find("already used") != std::string::npos);
    cr_expect(book.take(7, 2, tokens[1].from_initiator, t0 + 999ms).is_ok());
}

Test(rail_token_book, tokens_expire_and_the_book_is_bounded) {
    RailTokenBook book(1s);
    const std::vector<wire::RailToken> tokens = {token(1, 1)};
    book.enter(7, tokens, t0);
    cr_expect_eq(book.take(7, 1, tokens[0].from_initiator, t0 + 1s).status().code(), Code::Busy);
    cr_expect_eq(entries(book), 0u);
    for (std::uint64_t c = 1; c <= RailTokenBook::kMaxEntries + 10; ++c) book.enter(c, tokens, t0);
    cr_expect_eq(entries(book), RailTokenBook::kMaxEntries);
    // The oldest went first; the newest is there.
    cr_expect_eq(book.take(1, 1, tokens[0].from_initiator, t0).status().code(), Code::Busy);
    cr_expect(book.take(RailTokenBook::kMaxEntries + 10, 1, tokens[0].from_initiator, t0).is_ok());
}

Test(rail_token_book, each_token_expires_on_its_own_time_and_entering_again_renews_it) {
    RailTokenBook book(1s);
    const std::vector<wire::RailToken> first = {token(1, 1)}, second = {token(1, 2)}, third = {token(2, 3)};
    book.enter(7, first, t0);
    book.enter(8, third, t0 + 500ms);
    // Connection 7's rail entered again: the new token, with a lifetime of its own.
    book.enter(7, second, t0 + 600ms);
    cr_expect_eq(entries(book), 2u);
    // At t0 + 1s the first entering of 7 is due, but it was replaced: 7 stays.
    cr_expect(!book.take(7, 1, first[0].from_initiator, t0 + 1s).is_ok(), "the replaced token is gone");
    cr_expect_eq(entries(book), 2u);
    cr_expect(book.take(8, 2, third[0].from_initiator, t0 + 1499ms).is_ok());
    cr_expect_eq(book.take(8, 2, third[0].from_initiator, t0 + 1500ms).status().code(), Code::Busy, "expired");
    cr_expect_eq(entries(book), 1u);
    cr_expect(book.take(7, 1, second[0].from_initiator, t0 + 1599ms).is_ok());
    cr_expect_eq(book.take(7, 1, second[0].from_initiator, t0 + 1600ms).status().code(), Code::Busy);
    cr_expect_eq(entries(book), 0u);
}

Test(rail_token_book, entering_the_same_rails_again_and_again_keeps_the_records_bounded) {
    RailTokenBook book(1s);
    const std::vector<wire::RailToken> tokens = {token(1, 1)};
    for (std::uint64_t i = 0; i < 5 * RailTokenBook::kMaxEntries; ++i) book.enter(7, tokens, t0);
    cr_expect_eq(entries(book), 1u);
    cr_expect_leq(records(book), 2 * RailTokenBook::kMaxEntries);
    // The one live entry still expires on time.
    cr_expect(book.take(7, 1, tokens[0].from_initiator, t0 + 999ms).is_ok());
    cr_expect_eq(book.take(7, 1, tokens[0].from_initiator, t0 + 1s).status().code(), Code::Busy);
    cr_expect_eq(entries(book), 0u);
    cr_expect_eq(records(book), 0u);
}
