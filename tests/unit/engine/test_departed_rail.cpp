// A TCP rail socket that names a connection this engine has released (its
// peer re-dialled a rail to re-arm it just before it departed, and the
// socket arrived after the departure) is closed at once: nothing will ever
// claim it. One that names a connection not known yet (its proof may still
// be on the way) waits for it, but no longer than connect_timeout_ms, even
// while nothing else arrives. Authentication is off, so that the test can
// open a rail socket with a bare Hello, as the peer's re-dial would.
#include <criterion/criterion.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "../../support/tcp_engine_pair.h"
#include "wire/frame_codec.h"
#include "wire/protocol.h"

using namespace tent;
using namespace tent::test;
using Steady = std::chrono::steady_clock;

namespace {

constexpr int kConnectTimeoutMs = 10000;

// Opens a rail socket to `rail` with the Hello a peer's engine sends for
// rail 0 of `connection`.
int open_rail(const wire::TcpAddress& rail, std::uint64_t connection) {
    auto hello = wire::encode_frame(wire::Frame{
        .rail_id = 0,
        .connection_id = connection,
        .body = wire::Hello{.engine_id = 0x5eed, .rails = {wire::RailInfo{.rail_id = 0, .kind = wire::RailKind::Tcp}}}});
    cr_assert(hello.is_ok());
    int fd = dial_tcp(rail);
    cr_assert_geq(fd, 0, "cannot reach the rail listener");
    cr_assert_eq(::send(fd, hello->data(), hello->size(), MSG_NOSIGNAL), static_cast<ssize_t>(hello->size()));
    return fd;
}

// Milliseconds until the engine closed the socket (what it answered
// before is read and dropped), or -1 when it is still open after `limit_ms`.
long ms_until_closed(int fd, long limit_ms) {
    const auto start = Steady::now();
    for (;;) {
        const long waited = std::chrono::duration_cast<std::chrono::milliseconds>(Steady::now() - start).count();
        if (waited >= limit_ms) return -1;
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(limit_ms - waited)) <= 0) continue;
        char buf[512];
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0)
            return std::chrono::duration_cast<std::chrono::milliseconds>(Steady::now() - start).count();
    }
}

Config departed_config() {
    Config c = tcp_pair_config();
    Source api = api_source();
    (void)c.set(Knob::TcpRailAddresses, "127.0.0.1", api);
    (void)c.set(Knob::Auth, "false", api);
    (void)c.set(Knob::ConnectTimeoutMs, std::to_string(kConnectTimeoutMs), api);
    return c;
}

} // namespace

Test(departed_rail, a_rail_for_a_released_connection_is_closed_at_once, .timeout = 90) {
    TcpPair p(departed_config());
    Engine& b = *p.b;
    const auto addresses = advertised_tcp_addresses(b);
    {
        CheckedStream stream(*p.a, p.peer, b, 1000);
        for (int i = 0; i < 3; ++i) stream.round();
        stream.expect_every_message();
    }
    cr_assert_gt(b.rail_stats().size(), 0u);

    // a goes; b releases the connection (its rails are no longer listed).
    p.a.reset();
    for (int i = 0; i < 1000 && !b.rail_stats().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    cr_assert(b.rail_stats().empty(), "b did not release the departed connection within 10 s");

    const int departed = open_rail(addresses[1], p.peer);
    const long closed_after = ms_until_closed(departed, kConnectTimeoutMs / 2);
    ::close(departed);
    cr_assert_geq(closed_after, 0, "a rail socket for the departed connection was still open after %d ms",
                  kConnectTimeoutMs / 2);
    cr_assert(b.rail_stats().empty(), "the departed connection's rail came back");

    // A connection b has never seen: the rail waits for its proof, then goes.
    const int early = open_rail(addresses[1], p.peer + 1);
    cr_assert_eq(ms_until_closed(early, 2000), -1, "a rail socket for a connection not yet known was closed at once");
    const long early_closed = ms_until_closed(early, 3 * kConnectTimeoutMs);
    ::close(early);
    cr_assert_geq(early_closed, 0, "a rail socket for a connection that never came was open after %d ms",
                  2000 + 3 * kConnectTimeoutMs);
    printf("departed rail: closed after %ld ms; early rail closed %ld ms after the first 2000 ms (connect_timeout_ms %d)\n",
           closed_after, early_closed, kConnectTimeoutMs);
}
