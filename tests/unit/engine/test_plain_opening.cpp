// With authentication off, an engine reads a connector's opening (its
// address blob and Hello, written at once) in as few reads as it arrived
// in: accepted whether both frames come in one write or apart, byte by
// byte even; refused, without an answer, when bytes follow the Hello
// (a connector waits for the HelloAck before it sends anything else) or the
// opening is cut short. Between the strangers a real peer is served.
#include <criterion/criterion.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../../support/tcp_engine_pair.h"

using namespace tent;
using namespace tent::test;
using namespace std::chrono_literals;

namespace {

Config plain_config() {
    Config c = tcp_pair_config();
    (void)c.set(Knob::Auth, "false", api_source());
    (void)c.set(Knob::ConnectTimeoutMs, "2000", api_source());
    (void)c.set(Knob::LogLevel, "error", api_source());  // refusals are warnings by design
    return c;
}

// Sends `opening` in pieces of `piece` bytes, a pause between them, with
// `tail` in the same write as the last piece (written apart, it may come
// after the engine answered the Hello, as on a loaded machine it did); the
// HelloAck's result, or nothing when the engine closed or sent something
// else.
std::optional<wire::HelloResult> answer_to(const wire::TcpAddress& control, std::vector<std::uint8_t> opening,
                                           std::size_t piece, const std::vector<std::uint8_t>& tail = {}) {
    int fd = dial_tcp(control);
    cr_assert(fd >= 0, "cannot dial the engine's control port");
    const std::size_t opening_size = opening.size();
    opening.insert(opening.end(), tail.begin(), tail.end());
    for (std::size_t at = 0; at < opening_size; at += piece) {
        const bool last = opening_size - at <= piece;
        const std::size_t end = last ? opening.size() : at + piece;
        send_bytes(fd, opening.data() + at, end - at);
        if (piece < opening_size) std::this_thread::sleep_for(2ms);
    }
    // One frame, or the close (a refusal; an opening cut short is given up
    // after connect_timeout_ms, 2 s, within the socket's 5 s).
    auto frame = recv_frame(fd);
    ::close(fd);

    if (!frame.is_ok() || !std::holds_alternative<wire::HelloAck>(frame->body)) return std::nullopt;
    return std::get<wire::HelloAck>(frame->body).result;
}

} // namespace

Test(plain_opening, taken_whole_or_in_pieces_and_refused_with_bytes_behind, .timeout = 120) {
    auto responder = make_tcp_engine(plain_config());
    auto stranger = make_tcp_engine(plain_config());  // only its address blob is used
    const wire::TcpAddress control = advertised_tcp_addresses(*responder).front();
    const auto blob = stranger->address();

    // A fresh engine id per opening: an engine pair has one connection, and
    // a second Hello of the same pair is answered "crossed".
    std::uint64_t engine = 0x7e57'0000;
    auto next_opening = [&] {
        ++engine;
        return opening_bytes(blob, engine, engine, engine);
    };
    auto whole = answer_to(control, next_opening(), SIZE_MAX);
    cr_expect(whole == wire::HelloResult::Accepted, "an opening in one write was not accepted");
    auto apart = answer_to(control, next_opening(), blob.size());
    cr_expect(apart == wire::HelloResult::Accepted, "a blob and a Hello written apart were not accepted");
    auto bytewise = answer_to(control, next_opening(), 7);
    cr_expect(bytewise == wire::HelloResult::Accepted, "an opening in 7-byte pieces was not accepted");

    const std::vector<std::uint8_t> extra{'m', 'o', 'r', 'e'};
    cr_expect(!answer_to(control, next_opening(), SIZE_MAX, extra),
              "bytes behind the Hello got an answer");
    const auto cut = next_opening();
    cr_expect(!answer_to(control, std::vector<std::uint8_t>(cut.begin(), cut.end() - 3), SIZE_MAX),
              "an opening cut short got an answer");

    // The responder still serves a real peer, every byte checked.
    auto peer = make_tcp_engine(plain_config());
    auto id = peer->connect(responder->address());
    cr_assert(id.is_ok(), "%s", id.status().to_string().c_str());
    CheckedStream stream(*peer, *id, *responder, 200);
    for (int i = 0; i < 3; ++i) stream.round();
}
