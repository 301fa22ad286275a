// Random bytes drawn ahead (random_reserve.h): never the same bytes twice,
// not in the same process and not in a forked child, which must not
// repeat what its parent draws next; requests too large for the reserve
// still get fresh bytes.
#include <criterion/criterion.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <set>
#include <vector>

#include "common/crypto.h"
#include "common/random_reserve.h"

using namespace tent;

using Nonce = std::array<std::uint8_t, 32>;

Test(random_reserve, draws_never_repeat_across_refills) {
    // 2,000 draws of 32 bytes: about sixteen pages of the reserve.
    std::set<Nonce> seen;
    for (int i = 0; i < 2000; ++i) {
        Nonce n{};
        cr_assert(take_reserved_random(n), "draw %d", i);
        cr_assert(seen.insert(n).second, "draw %d repeats an earlier one", i);
    }
}

Test(random_reserve, a_forked_child_does_not_repeat_its_parents_next_draw) {
    Nonce first{};
    cr_assert(take_reserved_random(first));  // the reserve is filled and has bytes left
    int out[2];
    cr_assert_eq(::pipe(out), 0);
    const pid_t child = ::fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        Nonce n{};
        const bool ok = take_reserved_random(n);
        const ssize_t w = ok ? ::write(out[1], n.data(), n.size()) : -1;
        ::_exit(w == static_cast<ssize_t>(n.size()) ? 0 : 1);
    }
    ::close(out[1]);
    Nonce from_child{};
    std::size_t got = 0;
    while (got < from_child.size()) {
        const ssize_t n = ::read(out[0], from_child.data() + got, from_child.size() - got);
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    ::close(out[0]);
    int status = 0;
    cr_assert_eq(::waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child could not draw");
    cr_assert_eq(got, from_child.size());
    Nonce next{};
    cr_assert(take_reserved_random(next));
    cr_assert(from_child != next, "the child drew the bytes its parent drew next");
    cr_assert(from_child != first);
}

Test(random_reserve, an_empty_request_is_served) {
    std::vector<std::uint8_t> none;
    cr_assert(take_reserved_random(none));
    cr_assert(random_bytes(none).is_ok());
}

Test(random_reserve, large_requests_go_to_the_kernel) {
    std::vector<std::uint8_t> big(300, 0), again(300, 0);
    cr_assert_not(take_reserved_random(big), "the reserve serves at most 256 bytes at a time");
    cr_assert(random_bytes(big).is_ok());
    cr_assert(random_bytes(again).is_ok());
    cr_assert(big != again);
    cr_assert(big != std::vector<std::uint8_t>(300, 0));
}
