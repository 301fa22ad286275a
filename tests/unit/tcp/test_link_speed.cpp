// link_speed: a TCP rail's link speed from its interface's speed file.
#include <net/if.h>

#include <criterion/criterion.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "transport/tcp/link_speed.h"
#include "transport/tcp/link_watch.h"

using namespace tent::tcp;

Test(link_speed, parses_mbits_into_bytes_per_second) {
    cr_expect_float_eq(parse_link_speed("10000\n"), 1.25e9, 1e-3);
    cr_expect_float_eq(parse_link_speed("100"), 12.5e6, 1e-3);
    cr_expect_float_eq(parse_link_speed("400000\n"), 50e9, 1e-3);
}

Test(link_speed, unknown_speeds_are_zero) {
    for (const char* text : {"-1\n", "0\n", "", "\n", "fast\n", "10000 Mb/s\n", "1e4\n"})
        cr_expect_eq(parse_link_speed(text), 0.0, "'%s'", text);
}

namespace {

// A directory standing in for /sys/class/net, removed at the end.
struct NetClass {
    std::filesystem::path dir;
    NetClass() {
        char name[] = "/tmp/test_link_speed.XXXXXX";
        cr_assert_not_null(mkdtemp(name));
        dir = name;
    }
    ~NetClass() { std::filesystem::remove_all(dir); }
    void speed(const std::string& interface, const std::string& text) const {
        std::filesystem::create_directories(dir / interface);
        std::ofstream(dir / interface / "speed") << text;
    }
};

} // namespace

Test(link_speed, reads_the_speed_of_the_interface) {
    NetClass net;
    const int lo = static_cast<int>(if_nametoindex("lo"));
    cr_assert_gt(lo, 0);
    net.speed("lo", "25000\n");
    cr_expect_float_eq(link_speed_of(lo, net.dir.string()), 25000e6 / 8, 1e-3);
    net.speed("lo", "-1\n");
    cr_expect_eq(link_speed_of(lo, net.dir.string()), 0.0, "a speed the interface does not report");
}

Test(link_speed, no_speed_file_or_no_interface_is_unknown) {
    NetClass net;
    const int lo = static_cast<int>(if_nametoindex("lo"));
    cr_expect_eq(link_speed_of(lo, net.dir.string()), 0.0, "no speed file (loopback's own is unreadable)");
    net.speed("lo", "25000\n");
    cr_expect_eq(link_speed_of(0, net.dir.string()), 0.0, "an address on no interface");
    cr_expect_eq(link_speed_of(1 << 30, net.dir.string()), 0.0, "no such interface");
}

Test(link_speed, a_speed_file_that_cannot_be_read_is_unknown) {
    // The kernel's own file for loopback exists and its read fails
    // (EINVAL), as a down link's does.
    cr_expect_eq(link_speed_of(static_cast<int>(if_nametoindex("lo"))), 0.0);
}

Test(link_speed, the_interface_of_an_address_is_the_one_its_state_names) {
    // What the provider passes: the ifindex its link watch found for the
    // rail's local address.
    NetClass net;
    net.speed("lo", "25000\n");
    const LinkState state = link_states_now({"127.0.0.1"})["127.0.0.1"];
    cr_expect_float_eq(link_speed_of(state.ifindex, net.dir.string()), 25000e6 / 8, 1e-3);
    cr_expect_eq(link_states_now({"192.0.2.77"})["192.0.2.77"].ifindex, 0, "an address on no interface");
}
