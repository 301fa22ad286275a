// TCP rails heal: two engines over two real TCP rails (127.0.0.1 and
// 127.0.0.2); under a stream of striped writes and messages, the sockets
// of the 127.0.0.2 rail are shut down (as a reset connection or a dead
// peer would end them). Every byte arrives, every message exactly once and
// in order, and the rail is re-armed on a new socket and carries bytes
// again (its byte count grows after the failure). Shut down a second time,
// it comes back again.
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <sys/socket.h>

#include <cstdlib>

#include "../../support/tcp_engine_pair.h"

using namespace tent;
using namespace tent::test;

namespace {

bool is_ip(const sockaddr_in& a, const char* ip) {
    in_addr want{};
    inet_pton(AF_INET, ip, &want);
    return a.sin_family == AF_INET && a.sin_addr.s_addr == want.s_addr;
}

// Shuts down every connected TCP socket of this process between
// 127.0.0.2 addresses (both ends of that rail: both engines live here).
int shut_rail_sockets(const char* ip) {
    int shut = 0;
    DIR* d = opendir("/proc/self/fd");
    if (!d) return 0;
    while (dirent* e = readdir(d)) {
        const int fd = std::atoi(e->d_name);
        if (fd <= 2) continue;
        sockaddr_in local{}, peer{};
        socklen_t ll = sizeof local, pl = sizeof peer;
        if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &ll) != 0) continue;
        if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) != 0) continue;  // listeners too
        if (is_ip(local, ip) && is_ip(peer, ip) && ::shutdown(fd, SHUT_RDWR) == 0) ++shut;
    }
    closedir(d);
    return shut;
}

} // namespace

Test(engine_tcp_heal, a_closed_tcp_rail_reconnects_and_carries_bytes_again, .timeout = 120) {
    TcpPair p(tcp_pair_config());
    Engine& a = *p.a;
    CheckedStream stream(a, p.peer, *p.b, 4096);

    for (int failure = 1; failure <= 2; ++failure) {
        for (int i = 0; i < 5; ++i) stream.round();
        cr_assert_gt(rail_bytes(a, "tcp 127.0.0.2"), 0u, "the 127.0.0.2 rail carried nothing before failure %d",
                     failure);
        // Mid-stream: a write in flight when the sockets go.
        stream.start_write();
        cr_assert_geq(shut_rail_sockets("127.0.0.2"), 1, "no socket of the 127.0.0.2 rail found");
        stream.finish_write(failure == 1 ? "the write across failure 1" : "the write across failure 2");
        const std::uint64_t at_failure = rail_bytes(a, "tcp 127.0.0.2");

        // Bounded: the rail is re-armed within a few rounds (its re-arm
        // starts at once: one closed socket does not pause it).
        bool back = false;
        for (int i = 0; i < 200 && !back; ++i) {
            stream.round();
            back = rail_bytes(a, "tcp 127.0.0.2") > at_failure;
            if (!back) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        cr_assert(back, "failure %d: the 127.0.0.2 rail carried nothing after its socket closed (%llu bytes)",
                  failure, static_cast<unsigned long long>(at_failure));
    }

    stream.expect_every_message();
}
