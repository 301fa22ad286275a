// The connecting side of the job-key handshake on a real socket
// (AuthProver), against a responder played here: the Answer and the reply
// behind it are read however they arrive, and the reply's bytes read with
// the Answer are handed on, so the reply's frame is whole; bytes beyond
// the reply are an error; a Refusal is reported as soon as it arrives,
// without waiting for the close or the deadline.
#include <criterion/criterion.h>

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "common/crypto.h"
#include "transport/tcp/auth_socket.h"
#include "transport/tcp/control_socket.h"
#include "wire/auth_handshake.h"
#include "wire/control_frames.h"
#include "wire/frame_codec.h"

using namespace tent;
using namespace tent::tcp;
using namespace std::chrono_literals;

namespace {

const JobKey kKey(40, 'k');

struct Pair {
    UniqueFd prover;     // the connecting side's end
    UniqueFd responder;  // played by the test
};

Pair socket_pair() {
    int fds[2];
    cr_assert(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
    Pair p{UniqueFd(fds[0]), UniqueFd(fds[1])};
    cr_assert(set_blocking_with_timeout(p.prover.get(), 5s).is_ok());
    cr_assert(set_blocking_with_timeout(p.responder.get(), 5s).is_ok());
    return p;
}

std::vector<std::uint8_t> read_n(int fd, std::size_t n) {
    std::vector<std::uint8_t> out(n);
    std::size_t got = 0;
    while (got < n) {
        ssize_t r = ::recv(fd, out.data() + got, n - got, 0);
        cr_assert_gt(r, 0, "the prover's end closed or timed out");
        got += static_cast<std::size_t>(r);
    }
    return out;
}

void write_all(int fd, std::span<const std::uint8_t> bytes) {
    cr_assert_eq(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
}

std::vector<std::uint8_t> hello_ack_frame() {
    auto bytes = wire::encode_frame(wire::Frame{
        .rail_id = 0,
        .connection_id = 0x5eed,
        .body = wire::HelloAck{.engine_id = 0x77,
                               .result = wire::HelloResult::Accepted,
                               .version = 1,
                               .rails = {wire::RailInfo{.rail_id = 3, .kind = wire::RailKind::Tcp}}}});
    cr_assert(bytes.is_ok());
    return *bytes;
}

const std::vector<std::uint8_t> kOpening = {'o', 'p', 'e', 'n'};

const HmacKey& responder_key() {
    static const HmacKey key(kKey);
    return key;
}

// A prover that has sent its Greeting and opening, and the responder's
// Answer to them (not sent yet).
struct Opened {
    Pair p;
    AuthProver prover;
    wire::AuthResponder responder;
    std::vector<std::uint8_t> answer;
    TimePoint deadline;
};

Opened open_handshake() {
    Pair p = socket_pair();
    auto prover = AuthProver::start(*JobKeyCell::with(kKey));
    cr_assert(prover.is_ok());
    const auto deadline = SteadyClock::instance().now() + 5s;
    cr_assert(prover->open(p.prover.get(), kOpening, deadline).is_ok());
    wire::Nonce nonce{};
    cr_assert(random_bytes(nonce).is_ok());
    wire::AuthResponder responder(nonce);
    auto greeting = read_n(p.responder.get(), wire::kGreetingSize);
    cr_assert(read_n(p.responder.get(), kOpening.size()) == kOpening);
    auto answer = responder.on_greeting(greeting, responder_key(), {});
    cr_assert(answer.is_ok(), "%s", answer.status().to_string().c_str());
    return Opened{std::move(p), std::move(*prover), responder, std::move(*answer), deadline};
}

} // namespace

Test(auth_prover, reads_the_answer_and_reply_however_they_arrive, .timeout = 20) {
    Opened o = open_handshake();
    std::vector<std::uint8_t> sent = o.answer;
    const auto ack = hello_ack_frame();
    sent.insert(sent.end(), ack.begin(), ack.end());
    // In three writes paced apart: the header alone, the rest of the
    // Answer with the start of the reply, the rest of the reply.
    const std::size_t cuts[] = {0, 5, o.answer.size() + 10, sent.size()};
    std::thread writer([&] {
        for (int i = 0; i < 3; ++i) {
            if (i > 0) std::this_thread::sleep_for(20ms);
            write_all(o.p.responder.get(), std::span(sent).subspan(cuts[i], cuts[i + 1] - cuts[i]));
        }
    });
    auto start = o.prover.prove(o.p.prover.get(), o.deadline);
    cr_assert(start.is_ok(), "%s", start.status().to_string().c_str());
    // The Proof checks out, and the reply reads whole from what prove() handed on.
    auto proof = read_n(o.p.responder.get(), wire::kProofSize);
    cr_assert(o.responder.on_proof(proof, responder_key()).is_ok());
    auto frame = recv_frame(o.p.prover.get(), std::move(*start));
    writer.join();
    cr_assert(frame.is_ok(), "%s", frame.status().to_string().c_str());
    auto again = wire::encode_frame(*frame);
    cr_assert(again.is_ok());
    cr_assert(*again == ack, "the reply was not read as sent");
}

Test(auth_prover, bytes_beyond_the_reply_are_an_error, .timeout = 20) {
    Opened o = open_handshake();
    std::vector<std::uint8_t> sent = o.answer;
    const auto ack = hello_ack_frame();
    sent.insert(sent.end(), ack.begin(), ack.end());
    sent.insert(sent.end(), {1, 2, 3, 4});  // before the Proof: no responder sends these
    write_all(o.p.responder.get(), sent);
    auto start = o.prover.prove(o.p.prover.get(), o.deadline);
    cr_assert(start.is_ok(), "%s", start.status().to_string().c_str());
    auto frame = recv_frame(o.p.prover.get(), std::move(*start));
    cr_assert_not(frame.is_ok(), "a reply with bytes behind it was taken");
    cr_assert(frame.status().message().find("more than its reply") != std::string::npos, "%s",
              frame.status().to_string().c_str());
}

Test(auth_prover, a_refusal_is_reported_before_the_close, .timeout = 20) {
    Pair p = socket_pair();
    auto prover = AuthProver::start(*JobKeyCell::with(kKey));
    cr_assert(prover.is_ok());
    const auto t0 = SteadyClock::instance().now();
    cr_assert(prover->open(p.prover.get(), kOpening, t0 + 5s).is_ok());
    (void)read_n(p.responder.get(), wire::kGreetingSize + kOpening.size());
    const auto no = wire::refusal(wire::RefusalReason::OtherVersion);
    write_all(p.responder.get(), no);  // and the socket stays open
    auto start = prover->prove(p.prover.get(), t0 + 5s);
    cr_assert_not(start.is_ok());
    cr_assert_eq(start.status().code(), Code::Unsupported, "%s", start.status().to_string().c_str());
    cr_assert_lt(SteadyClock::instance().now() - t0, 4s, "the refusal waited for the deadline");
}
