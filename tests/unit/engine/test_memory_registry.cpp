// MemoryRegistry::find_local: the registration holding a local range, found
// by address among many (the interposer registers every send buffer), with
// overlapping regions and removals; checked against a scan of every region.
#include <criterion/criterion.h>

#include <cstdint>
#include <random>
#include <vector>

#include "engine/memory_registry.h"

using namespace tent;

namespace {

struct Region {
    std::uint64_t id;
    std::uint64_t address;
    std::uint64_t length;
};

bool holds(const Region& r, std::uint64_t a, std::uint64_t n) {
    return a >= r.address && a - r.address <= r.length && n <= r.length - (a - r.address);
}

// Registers [base + offset, + length) of arena (no transport: the keys are
// not what is looked up).
Region add(MemoryRegistry& reg, std::vector<std::uint8_t>& arena, std::uint64_t offset, std::uint64_t length) {
    auto r = reg.add(arena.data() + offset, length, 0, {});
    cr_assert(r.is_ok(), "%s", r.status().to_string().c_str());
    const auto& handle = (*r)->handle;
    return Region{(*r)->id, handle.address, handle.length};
}

} // namespace

Test(memory_registry, finds_each_of_many_disjoint_buffers) {
    MemoryRegistry reg;
    std::vector<std::uint8_t> arena(1 << 20);
    std::vector<Region> regions;
    // 300 buffers of 1 to 4 KiB with gaps between them.
    std::uint64_t off = 64;
    for (int i = 0; i < 300; ++i) {
        std::uint64_t len = 1024 + static_cast<std::uint64_t>(i % 4) * 1024;
        regions.push_back(add(reg, arena, off, len));
        off += len + 64;
    }
    for (const Region& r : regions) {
        auto* start = reinterpret_cast<void*>(r.address);
        auto found = reg.find_local(start, r.length);
        cr_assert(found, "no region for a whole buffer at +%llu", (unsigned long long)(r.address - (std::uint64_t)arena.data()));
        cr_expect_eq(found->id, r.id);
        auto mid = reg.find_local(reinterpret_cast<void*>(r.address + r.length / 2), r.length / 2);
        cr_assert(mid);
        cr_expect_eq(mid->id, r.id, "the second half of a buffer belongs to it");
        cr_expect_null(reg.find_local(start, r.length + 1).get(), "one byte past a buffer, into the gap");
        cr_expect_null(reg.find_local(reinterpret_cast<void*>(r.address - 1), 1).get(), "the byte before a buffer");
    }
    cr_expect_null(reg.find_local(arena.data(), 1).get(), "before the first buffer");
    cr_expect_null(reg.find_local(arena.data() + off + 10, 1).get(), "after the last one");
}

Test(memory_registry, matches_a_scan_of_every_region_with_overlaps_and_removals) {
    MemoryRegistry reg;
    std::vector<std::uint8_t> arena(1 << 16);
    std::mt19937_64 rng(20261129);
    std::vector<Region> live;
    auto check_all = [&](int round) {
        for (int q = 0; q < 400; ++q) {
            std::uint64_t a = rng() % arena.size();
            std::uint64_t n = rng() % 2048;
            const std::uint64_t addr = reinterpret_cast<std::uint64_t>(arena.data()) + a;
            auto found = reg.find_local(reinterpret_cast<void*>(addr), n);
            bool any = false;
            for (const Region& r : live) any = any || holds(r, addr, n);
            cr_assert_eq(found != nullptr, any, "round %d: [+%llu, +%llu) %s, a scan says %s", round,
                         (unsigned long long)a, (unsigned long long)(a + n), found ? "found" : "not found",
                         any ? "held" : "not held");
            if (found) {
                Region f{found->id, found->handle.address, found->handle.length};
                cr_assert(holds(f, addr, n), "round %d: the region found does not hold the range", round);
            }
        }
    };
    for (int round = 0; round < 30; ++round) {
        // Regions of 1 B to 8 KiB anywhere, overlapping one another, and
        // now and then one of 20 KiB over many of them.
        for (int i = 0; i < 20; ++i) {
            std::uint64_t len = (round % 7 == 3 && i == 0) ? 20480 : 1 + rng() % 8192;
            std::uint64_t off = rng() % (arena.size() - len);
            live.push_back(add(reg, arena, off, len));
        }
        check_all(round);
        // Remove about a third, the long ones among them now and then.
        for (std::size_t i = 0; i < live.size();) {
            if (rng() % 3 == 0) {
                cr_assert(reg.remove(live[i].id, {}).is_ok());
                live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
            } else {
                ++i;
            }
        }
        check_all(round);
        cr_expect_eq(reg.size(), live.size());
    }
}
