// The accepting side of rail tokens on real sockets (AuthGate): a rail
// socket that shows its entered token is answered with the responder's
// token and the owner's reply in one write and handed over at once; the
// same opening replayed on another socket is refused and closed without a
// byte or a hand-over; a socket whose token is entered only after it
// arrived waits for it; a greeting of another version gets a Refusal
// before the close.
#include <criterion/criterion.h>

#include <sys/socket.h>
#include <unistd.h>

#include <any>
#include <vector>

#include "transport/tcp/auth_socket.h"
#include "wire/control_frames.h"
#include "wire/frame_codec.h"
#include "wire/protocol.h"

using namespace tent;
using namespace tent::tcp;
using namespace std::chrono_literals;

namespace {

struct Pair {
    UniqueFd ours;  // the gate's end
    UniqueFd peer;  // the connecting side's end
};

Pair socket_pair() {
    int fds[2];
    cr_assert(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
    return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

std::vector<std::uint8_t> hello_frame() {
    auto bytes = wire::encode_frame(wire::Frame{
        .rail_id = 0,
        .connection_id = 7,
        .body = wire::Hello{.engine_id = 0x71, .rails = {wire::RailInfo{.rail_id = 1, .kind = wire::RailKind::Tcp}}}});
    cr_assert(bytes.is_ok());
    return *bytes;
}

// Everything the peer end has to read now, and whether the gate closed it.
std::vector<std::uint8_t> drain(int fd, bool& closed) {
    std::vector<std::uint8_t> out;
    closed = false;
    for (int i = 0; i < 64; ++i) {
        std::uint8_t buf[512];
        ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) {
            out.insert(out.end(), buf, buf + n);
            continue;
        }
        closed = n == 0;
        break;
    }
    return out;
}

std::unique_ptr<AuthGate> make_gate(int& answered) {
    auto gate = AuthGate::create(
        JobKeyCell::with(JobKey(40, 'k')), 1s, "tcp rail", 1,
        [&answered](int, const std::vector<std::span<const std::uint8_t>>&) -> Result<AuthGate::Reply> {
            ++answered;
            AuthGate::Reply r;
            r.bytes = {'a', 'c', 'k'};
            r.held = 42;
            r.rail = std::make_pair(std::uint64_t{7}, std::uint16_t{1});
            return r;
        });
    cr_assert(gate.is_ok());
    return std::move(*gate);
}

wire::RailToken the_token() {
    wire::RailToken t;
    t.rail_id = 1;
    t.from_initiator.fill(0x11);
    t.from_responder.fill(0x22);
    return t;
}

std::vector<std::uint8_t> opening(const wire::RailTokenBytes& token) {
    auto open = wire::rail_open(token);
    std::vector<std::uint8_t> bytes(open.begin(), open.end());
    auto hello = hello_frame();
    bytes.insert(bytes.end(), hello.begin(), hello.end());
    return bytes;
}

} // namespace

Test(auth_gate, a_rail_token_opens_once_and_a_replay_is_refused) {
    int answered = 0;
    auto gate = make_gate(answered);
    const TimePoint now = SteadyClock::instance().now();
    const wire::RailToken t = the_token();
    gate->enter_rail_tokens(7, std::span(&t, 1), now);
    const auto bytes = opening(t.from_initiator);

    Pair first = socket_pair();
    cr_assert(::send(first.peer.get(), bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()));
    gate->admit(std::move(first.ours), now);
    auto proven = gate->poll(now);
    cr_assert_eq(proven.size(), 1u);
    cr_expect(proven[0].answered);
    cr_expect_eq(std::any_cast<int>(proven[0].held), 42);
    bool closed = false;
    auto reply = drain(first.peer.get(), closed);
    cr_assert_eq(reply.size(), wire::kRailAcceptSize + 3);
    auto shown = wire::rail_token_of(std::span(reply).first(wire::kRailAcceptSize), wire::AuthMessageType::RailAccept);
    cr_assert(shown.is_ok());
    cr_expect(*shown == t.from_responder);
    cr_expect_eq(reply.back(), 'k');

    // The same bytes on a new socket: refused, not a byte back, nothing handed over.
    Pair replay = socket_pair();
    cr_assert(::send(replay.peer.get(), bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()));
    gate->admit(std::move(replay.ours), now);
    cr_expect(gate->poll(now).empty());
    cr_expect_eq(gate->pending(), 0u, "refused at once, not held until the timeout");
    auto nothing = drain(replay.peer.get(), closed);
    cr_expect(nothing.empty());
    cr_expect(closed);
}

Test(auth_gate, a_rail_socket_waits_for_its_token_and_a_wrong_one_is_refused) {
    int answered = 0;
    auto gate = make_gate(answered);
    TimePoint now = SteadyClock::instance().now();
    const wire::RailToken t = the_token();
    const auto bytes = opening(t.from_initiator);
    Pair early = socket_pair();
    cr_assert(::send(early.peer.get(), bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()));
    gate->admit(std::move(early.ours), now);
    cr_expect(gate->poll(now).empty());
    cr_expect_eq(gate->pending(), 1u, "held: its connection's proof may be on the way");
    bool closed = false;
    cr_expect(drain(early.peer.get(), closed).empty());

    // A wrong token for the same rail, once the token is entered: refused.
    gate->enter_rail_tokens(7, std::span(&t, 1), now);
    wire::RailTokenBytes wrong = t.from_initiator;
    wrong[31] ^= 1;
    const auto bad = opening(wrong);
    Pair stranger = socket_pair();
    cr_assert(::send(stranger.peer.get(), bad.data(), bad.size(), 0) == static_cast<ssize_t>(bad.size()));
    gate->admit(std::move(stranger.ours), now);
    auto proven = gate->poll(now);
    // The early socket got its token; the stranger did not spend it.
    cr_assert_eq(proven.size(), 1u);
    cr_expect_eq(gate->pending(), 0u);
    cr_expect(drain(stranger.peer.get(), closed).empty());
    cr_expect(closed);
    cr_expect_eq(drain(early.peer.get(), closed).size(), wire::kRailAcceptSize + 3);

    // A socket whose token never comes is closed at the timeout.
    Pair late = socket_pair();
    const auto other = opening(wrong);
    cr_assert(::send(late.peer.get(), other.data(), other.size(), 0) == static_cast<ssize_t>(other.size()));
    gate->admit(std::move(late.ours), now);
    cr_expect(gate->poll(now).empty());
    cr_expect(gate->poll(now + 2s).empty());
    cr_expect_eq(gate->pending(), 0u);
}

Test(auth_gate, another_version_is_refused_with_a_refusal) {
    int answered = 0;
    auto gate = make_gate(answered);
    const TimePoint now = SteadyClock::instance().now();
    wire::AuthInitiator me(wire::Nonce{1});
    auto greeting = me.greeting();
    greeting[4] = wire::kAuthVersion - 1;
    Pair old = socket_pair();
    cr_assert(::send(old.peer.get(), greeting.data(), greeting.size(), 0) == static_cast<ssize_t>(greeting.size()));
    gate->admit(std::move(old.ours), now);
    cr_expect(gate->poll(now).empty());
    bool closed = false;
    auto reply = drain(old.peer.get(), closed);
    cr_expect(closed);
    cr_assert_eq(reply.size(), wire::kRefusalSize);
    Status s = wire::check_auth_header(reply, wire::AuthMessageType::Answer);
    cr_expect_eq(s.code(), Code::Unsupported);
    cr_expect(s.message().find("version") != std::string::npos, "%s", s.message().c_str());
    cr_expect_eq(answered, 0, "nothing was answered");
}
