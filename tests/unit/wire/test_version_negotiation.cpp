// Version negotiation picks the highest common version and refuses ranges
// that do not overlap, naming both.
#include <criterion/criterion.h>

#include <string>

#include "wire/version_negotiation.h"

using namespace tent;
using namespace tent::wire;

Test(version_negotiation, highest_common_version) {
    auto v = negotiate_version(1, 3, 2, 5);
    cr_assert(v.is_ok());
    cr_expect_eq(*v, 3);
    v = negotiate_version(2, 5, 1, 3);
    cr_assert(v.is_ok());
    cr_expect_eq(*v, 3);
    v = negotiate_version(1, 1, 1, 255);
    cr_assert(v.is_ok());
    cr_expect_eq(*v, 1);
    v = negotiate_version(4, 4, 4, 4);
    cr_assert(v.is_ok());
    cr_expect_eq(*v, 4);
}

Test(version_negotiation, disjoint_or_bad_ranges_are_refused) {
    auto v = negotiate_version(1, 2, 3, 4);
    cr_assert(!v.is_ok());
    cr_expect_eq(v.status().code(), Code::Unsupported);
    const std::string msg = v.status().message();
    cr_expect_str_eq(msg.c_str(), "no common protocol version: this side speaks 1..2, peer 3..4");
    cr_expect(!negotiate_version(3, 4, 1, 2).is_ok());
    cr_expect(!negotiate_version(1, 5, 3, 2).is_ok(), "inverted peer range");
    cr_expect(!negotiate_version(0, 5, 0, 0).is_ok(), "version 0 does not exist");
}

Test(version_negotiation, this_build_speaks_its_own_range) {
    auto v = negotiate_version(kMinProtocolVersion, kMaxProtocolVersion);
    cr_assert(v.is_ok());
    cr_expect_eq(*v, kMaxProtocolVersion);
    cr_expect(!negotiate_version(kMaxProtocolVersion + 1, 255).is_ok());
}
