// The TCP target's atomic ledger: an atomic executes once per (connection,
// id) -- a repeat gets the first result back and leaves the word alone --
// ids of different connections do not mix, and a connection's results go
// when its last rail leaves, so a server whose peers come and go keeps
// nothing of them.
#include <criterion/criterion.h>

#include <cstdint>

#include "transport/tcp/atomic_ledger.h"

using namespace tent;
using tent::tcp::AtomicLedger;

Test(atomic_ledger, a_repeated_id_returns_the_first_result_without_executing_again) {
    AtomicLedger ledger;
    ledger.join(7);
    std::uint64_t word = 10;
    cr_expect_eq(ledger.execute(7, 1, &word, wire::AtomicOp::FetchAdd, 5, 0), 10u);
    cr_expect_eq(word, 15u);
    cr_expect_eq(ledger.execute(7, 1, &word, wire::AtomicOp::FetchAdd, 5, 0), 10u);
    cr_expect_eq(word, 15u, "a replay added again");
    cr_expect_eq(ledger.execute(7, 2, &word, wire::AtomicOp::CompareSwap, 15, 99), 15u);
    cr_expect_eq(word, 99u);
    cr_expect_eq(ledger.execute(7, 2, &word, wire::AtomicOp::CompareSwap, 99, 1), 15u);
    cr_expect_eq(word, 99u, "a replayed compare-and-swap swapped again");
}

Test(atomic_ledger, connections_keep_their_own_ids) {
    AtomicLedger ledger;
    ledger.join(1);
    ledger.join(2);
    std::uint64_t word = 0;
    cr_expect_eq(ledger.execute(1, 42, &word, wire::AtomicOp::FetchAdd, 1, 0), 0u);
    cr_expect_eq(ledger.execute(2, 42, &word, wire::AtomicOp::FetchAdd, 1, 0), 1u);
    cr_expect_eq(word, 2u);
}

Test(atomic_ledger, results_stay_while_any_rail_of_the_connection_remains) {
    AtomicLedger ledger;
    ledger.join(3);
    ledger.join(3);  // a second TCP rail of the same connection
    std::uint64_t word = 0;
    (void)ledger.execute(3, 9, &word, wire::AtomicOp::FetchAdd, 1, 0);
    ledger.leave(3);
    cr_expect_eq(ledger.connections(), 1u);
    // The replay of id 9 on the surviving rail still finds its result.
    cr_expect_eq(ledger.execute(3, 9, &word, wire::AtomicOp::FetchAdd, 1, 0), 0u);
    cr_expect_eq(word, 1u);
    ledger.leave(3);
    cr_expect_eq(ledger.connections(), 0u, "a departed connection's results were kept");
}

Test(atomic_ledger, keeps_the_newest_results_up_to_its_capacity) {
    AtomicLedger ledger;
    ledger.join(5);
    std::uint64_t word = 0;
    for (std::uint64_t id = 0; id < AtomicLedger::kCapacity + 1; ++id)
        (void)ledger.execute(5, id, &word, wire::AtomicOp::FetchAdd, 1, 0);
    cr_expect_eq(word, AtomicLedger::kCapacity + 1);
    // The newest is remembered; the oldest fell out (and would run again).
    cr_expect_eq(ledger.execute(5, AtomicLedger::kCapacity, &word, wire::AtomicOp::FetchAdd, 1, 0),
                 AtomicLedger::kCapacity);
    cr_expect_eq(word, AtomicLedger::kCapacity + 1);
    (void)ledger.execute(5, 0, &word, wire::AtomicOp::FetchAdd, 1, 0);
    cr_expect_eq(word, AtomicLedger::kCapacity + 2);
}
