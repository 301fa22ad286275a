// A map's erased nodes kept for its next inserts (common/node_spares.h):
// inserts and erases behave as the map's own, an insert over a present key
// assigns, and a node is reused rather than freed (not under
// AddressSanitizer, which must see every use after free).
#include <criterion/criterion.h>

#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "common/node_spares.h"
#include "common/sanitizers.h"

using namespace tent;

Test(node_spares, inserts_and_erases_as_the_map_would) {
    std::map<int, std::string> map;
    NodeSpares<decltype(map)> spares;
    spares.assign(map, 3, "three");
    spares.assign(map, 1, "one");
    spares.assign(map, 2, "two");
    cr_expect_eq(map.size(), 3u);
    auto next = spares.erase(map, map.find(2));
    cr_assert(next != map.end());
    cr_expect_eq(next->first, 3, "erase returns the entry after the erased one");
    cr_expect_eq(map.count(2), 0u);
    cr_expect_eq(spares.kept(), kAddressSanitizer ? 0u : 1u);
    // The kept node takes the next key, in order, with its own value.
    auto at = spares.assign(map, 0, "zero");
    cr_expect_eq(at->first, 0);
    cr_expect_eq(spares.kept(), 0u);
    cr_expect_eq(map.begin()->second, "zero");
    cr_expect_eq(map.at(1), "one");
    cr_expect_eq(map.at(3), "three");
}

Test(node_spares, an_insert_over_a_present_key_assigns) {
    std::map<int, std::unique_ptr<int>> map;
    NodeSpares<decltype(map)> spares;
    spares.assign(map, 7, std::make_unique<int>(1));
    spares.assign(map, 8, std::make_unique<int>(2));
    spares.erase(map, map.find(8));
    // With a node kept and without: both keep one entry with the new value.
    spares.assign(map, 7, std::make_unique<int>(10));
    cr_expect_eq(map.size(), 1u);
    cr_expect_eq(*map.at(7), 10);
    cr_expect_eq(spares.kept(), kAddressSanitizer ? 0u : 1u, "the unused node stays kept");
    spares.assign(map, 7, std::make_unique<int>(20));
    cr_expect_eq(*map.at(7), 20);
}

Test(node_spares, erasing_every_entry_walks_the_map) {
    std::map<int, int> map;
    NodeSpares<decltype(map)> spares;
    for (int i = 0; i < 100; ++i) spares.assign(map, i, i * i);
    int seen = 0;
    for (auto it = map.begin(); it != map.end();) {
        cr_expect_eq(it->second, it->first * it->first);
        it = spares.erase(map, it);
        ++seen;
    }
    cr_expect_eq(seen, 100);
    cr_expect(map.empty());
    for (int i = 0; i < 100; ++i) spares.assign(map, i, -i);
    for (int i = 0; i < 100; ++i) cr_expect_eq(map.at(i), -i);
}

// The engine keeps its requests and pieces in flight in hashed maps: the
// same promises hold there (erase returns the entry after, in the map's
// own order; a kept node takes a new key and is found by it).
Test(node_spares, an_unordered_map_keeps_and_reuses_nodes_too) {
    std::unordered_map<std::uint64_t, std::unique_ptr<int>> map;
    NodeSpares<decltype(map)> spares;
    for (std::uint64_t i = 1; i <= 64; ++i) spares.assign(map, i, std::make_unique<int>(static_cast<int>(i)));
    auto expected_next = std::next(map.find(10));
    cr_expect(spares.erase(map, map.find(10)) == expected_next);
    cr_expect_eq(map.count(10), 0u);
    cr_expect_eq(spares.kept(), kAddressSanitizer ? 0u : 1u);
    spares.assign(map, 65, std::make_unique<int>(65));
    cr_expect_eq(spares.kept(), 0u, "the kept node took key 65");
    spares.assign(map, 65, std::make_unique<int>(650));
    cr_expect_eq(map.size(), 64u);
    cr_expect_eq(*map.at(65), 650);
    int seen = 0;
    for (auto it = map.begin(); it != map.end(); ++seen) it = spares.erase(map, it);
    cr_expect_eq(seen, 64);
    cr_expect(map.empty());
    for (std::uint64_t i = 100; i < 164; ++i) spares.assign(map, i, std::make_unique<int>(-static_cast<int>(i)));
    for (std::uint64_t i = 100; i < 164; ++i) cr_expect_eq(*map.at(i), -static_cast<int>(i));
}
