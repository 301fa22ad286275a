// The job-key handshake as pure functions: both ends with the same key
// authenticate; a wrong key, a replayed answer or proof, a reflected
// message, garbage, a truncated message and messages out of turn all fail,
// and a failed state machine stays failed.
#include <criterion/criterion.h>

#include <string>
#include <vector>

#include "common/crypto.h"
#include "common/job_key_cell.h"
#include "wire/auth_handshake.h"
#include "wire/protocol.h"

using namespace tent;
using namespace tent::wire;

namespace {

using Bytes = std::vector<std::uint8_t>;

JobKey key_of(const std::string& s) { return JobKey(s.begin(), s.end()); }
const JobKey kKeyBytes = key_of("the job's key, 32 bytes or so...");
const HmacKey kKey(kKeyBytes);
const HmacKey kOtherKey(key_of("a stranger's key of similar size"));

Nonce nonce(std::uint8_t seed) {
    Nonce n;
    for (std::size_t i = 0; i < n.size(); ++i) n[i] = static_cast<std::uint8_t>(seed * 31 + i);
    return n;
}

struct Transcript {
    GreetingBytes greeting;
    Bytes answer;
    ProofBytes proof;
};

RailToken token(std::uint16_t rail, std::uint8_t seed) {
    RailToken t;
    t.rail_id = rail;
    for (std::size_t i = 0; i < t.from_initiator.size(); ++i) {
        t.from_initiator[i] = static_cast<std::uint8_t>(seed * 7 + i);
        t.from_responder[i] = static_cast<std::uint8_t>(seed * 13 + i * 3);
    }
    return t;
}

// One complete exchange; asserts that it succeeds.
Transcript run(std::uint8_t seed_r, std::uint8_t seed_i, std::span<const RailToken> tokens = {}) {
    AuthResponder r(nonce(seed_r));
    AuthInitiator i(nonce(seed_i));
    Transcript t;
    t.greeting = i.greeting();
    auto answer = r.on_greeting(t.greeting, kKey, tokens);
    cr_assert(answer.is_ok(), "%s", answer.status().to_string().c_str());
    t.answer = *answer;
    cr_expect(r.state() == AuthResponder::State::AwaitingProof);
    auto proof = i.on_answer(t.answer, kKey);
    cr_assert(proof.is_ok(), "%s", proof.status().to_string().c_str());
    t.proof = *proof;
    cr_expect(i.state() == AuthInitiator::State::Done);
    cr_assert(r.on_proof(t.proof, kKey).is_ok());
    cr_expect(r.state() == AuthResponder::State::Done);
    return t;
}

// What an initiator holding `key` would prove for this answer, whether or
// not the answer itself is right (an attacker does not check it): the
// message format of auth_handshake.h, written out independently.
ProofBytes proof_with(const HmacKey& key, const Bytes& answer, const Nonce& nonce_i) {
    const std::string label = "tent auth v3 initiator";
    auto mac = key.mac({std::span(reinterpret_cast<const std::uint8_t*>(label.data()), label.size()),
                        std::span(answer).subspan(kAuthHeaderSize, 32), nonce_i, std::span(answer).subspan(kAnswerSize)});
    cr_assert(mac.is_ok());
    ProofBytes p{'T', 'N', 'T', 'A', kAuthVersion, static_cast<std::uint8_t>(AuthMessageType::Proof), 0, 0};
    std::copy(mac->begin(), mac->end(), p.begin() + kAuthHeaderSize);
    return p;
}

} // namespace

Test(auth_handshake, same_key_authenticates_both_ways_and_no_key_on_the_wire) {
    Transcript t = run(1, 2);
    // Neither the key nor any 8-byte piece of it appears in what was sent.
    std::string wire(t.greeting.begin(), t.greeting.end());
    wire.append(t.answer.begin(), t.answer.end());
    wire.append(t.proof.begin(), t.proof.end());
    for (std::size_t at = 0; at + 8 <= kKeyBytes.size(); ++at)
        cr_expect_eq(wire.find(std::string(kKeyBytes.begin() + at, kKeyBytes.begin() + at + 8)), std::string::npos);
}

Test(auth_handshake, the_prepared_key_gives_the_same_mac_every_time) {
    const std::uint8_t data[] = {1, 2, 3};
    auto a = kKey.mac({data});
    auto b = kKey.mac({std::span(data).first(1), std::span(data).subspan(1)});
    cr_assert(a.is_ok() && b.is_ok());
    cr_expect(*a == *b, "parts are MACed as their concatenation, and the prepared context is not consumed");
    auto c = kOtherKey.mac({data});
    cr_assert(c.is_ok());
    cr_expect(*a != *c);
}

Test(auth_handshake, fresh_nonces_make_fresh_messages) {
    Transcript a = run(1, 2);
    Transcript b = run(3, 4);
    cr_expect(a.greeting != b.greeting);
    cr_expect(a.answer != b.answer);
    cr_expect(a.proof != b.proof);
}

Test(auth_handshake, responder_refuses_a_wrong_key) {
    AuthResponder r(nonce(1));
    AuthInitiator i(nonce(2));
    auto answer = r.on_greeting(i.greeting(), kKey);
    cr_assert(answer.is_ok());
    // A stranger with another key cannot check the answer; it proves anyway.
    auto proof = proof_with(kOtherKey, *answer, nonce(2));
    Status s = r.on_proof(proof, kKey);
    cr_assert(!s.is_ok());
    cr_expect_eq(s.code(), Code::PeerUnreachable);
    cr_expect(s.message().find("key") != std::string::npos, "%s", s.message().c_str());
    cr_expect(r.state() == AuthResponder::State::Failed);
    // Failed stays failed, even when the right proof follows.
    cr_expect(!r.on_proof(proof_with(kKey, *answer, nonce(2)), kKey).is_ok());
    // With the right key the same construction is accepted: the test's proof is the real one.
    AuthResponder r2(nonce(1));
    auto answer2 = r2.on_greeting(i.greeting(), kKey);
    cr_assert(answer2.is_ok());
    cr_expect(r2.on_proof(proof_with(kKey, *answer2, nonce(2)), kKey).is_ok());
}

Test(auth_handshake, initiator_refuses_a_responder_with_a_wrong_key) {
    AuthInitiator i(nonce(2));
    AuthResponder impostor(nonce(1));
    auto answer = impostor.on_greeting(i.greeting(), kOtherKey);
    cr_assert(answer.is_ok());
    auto proof = i.on_answer(*answer, kKey);
    cr_assert(!proof.is_ok(), "no proof goes to a responder without the key");
    cr_expect(proof.status().message().find("key") != std::string::npos);
    cr_expect(i.state() == AuthInitiator::State::Failed);
    // Nor can one forge an answer: any 32 bytes of MAC fail.
    AuthInitiator i2(nonce(2));
    Bytes forged = *answer;
    forged[kAuthHeaderSize + 40] ^= 1;
    cr_expect(!i2.on_answer(forged, kKey).is_ok());
}

Test(auth_handshake, replayed_proof_fails_on_a_new_connection) {
    Transcript old = run(1, 2);
    // The old greeting replayed: the responder draws a new nonce, so the
    // old proof no longer matches.
    AuthResponder r(nonce(9));
    cr_assert(r.on_greeting(old.greeting, kKey).is_ok());
    cr_expect(!r.on_proof(old.proof, kKey).is_ok());
    cr_expect(r.state() == AuthResponder::State::Failed);
}

Test(auth_handshake, replayed_answer_fails_for_a_new_greeting) {
    Transcript old = run(1, 2);
    // A fake responder replays a recorded answer to a new initiator.
    AuthInitiator i(nonce(7));
    cr_expect(!i.on_answer(old.answer, kKey).is_ok());
    cr_expect(i.state() == AuthInitiator::State::Failed);
}

Test(auth_handshake, an_answer_is_not_accepted_as_a_proof) {
    // Reflection: the responder's own MAC sent back to it as the initiator's.
    AuthResponder r(nonce(1));
    AuthInitiator i(nonce(2));
    auto answer = r.on_greeting(i.greeting(), kKey);
    cr_assert(answer.is_ok());
    ProofBytes reflected{};
    std::copy(answer->begin(), answer->begin() + kAuthHeaderSize, reflected.begin());
    reflected[5] = static_cast<std::uint8_t>(AuthMessageType::Proof);
    std::copy(answer->begin() + kAuthHeaderSize + 32, answer->end(), reflected.begin() + kAuthHeaderSize);
    cr_expect(!r.on_proof(reflected, kKey).is_ok());
}

Test(auth_handshake, a_proof_is_not_accepted_as_an_answer) {
    // Reflection the other way: an initiator's proof, with the responder's
    // nonce, does not pass for a responder's answer.
    Transcript t = run(1, 2);
    AuthInitiator i(nonce(2));
    Bytes reflected = t.answer;
    std::copy(t.proof.begin() + kAuthHeaderSize, t.proof.end(), reflected.begin() + kAuthHeaderSize + 32);
    cr_expect(!i.on_answer(reflected, kKey).is_ok());
}

Test(auth_handshake, messages_echoing_the_other_sides_nonce_are_refused) {
    // A responder that sends the initiator's own nonce back...
    AuthInitiator i(nonce(2));
    AuthResponder mirror(nonce(2));
    auto answer = mirror.on_greeting(i.greeting(), kKey);
    cr_expect(!answer.is_ok(), "the responder refuses a greeting equal to its own nonce");
    Bytes echo(kAnswerSize);
    auto g = i.greeting();
    std::copy(g.begin(), g.end(), echo.begin());
    echo[5] = static_cast<std::uint8_t>(AuthMessageType::Answer);
    cr_expect(!i.on_answer(echo, kKey).is_ok());
}

Test(auth_handshake, garbage_and_truncation_are_refused) {
    AuthResponder r(nonce(1));
    GreetingBytes garbage;
    garbage.fill(0x41);
    cr_expect(!r.on_greeting(garbage, kKey).is_ok());

    AuthInitiator i(nonce(2));
    AuthResponder r2(nonce(1));
    auto greeting = i.greeting();
    cr_expect(!r2.on_greeting(std::span(greeting).first(kGreetingSize - 1), kKey).is_ok());

    AuthResponder r3(nonce(1));
    auto answer = r3.on_greeting(i.greeting(), kKey);
    cr_assert(answer.is_ok());
    cr_expect(!i.on_answer(std::span(*answer).first(10), kKey).is_ok());

    AuthResponder r4(nonce(1));
    AuthInitiator i4(nonce(2));
    auto answer4 = r4.on_greeting(i4.greeting(), kKey);
    cr_assert(answer4.is_ok());
    auto proof = i4.on_answer(*answer4, kKey);
    cr_assert(proof.is_ok());
    cr_expect(!r4.on_proof(std::span(*proof).first(kProofSize - 1), kKey).is_ok());
}

Test(auth_handshake, header_check_refuses_early) {
    const std::uint8_t http[] = {'G', 'E', 'T', ' '};
    cr_expect(!check_auth_header(http, AuthMessageType::Greeting).is_ok());
    // The first byte alone is enough to refuse.
    cr_expect(!check_auth_header(std::span(http).first(1), AuthMessageType::Greeting).is_ok());
    AuthInitiator i(nonce(1));
    auto greeting = i.greeting();
    // A valid header of another type is refused, a prefix of the right one is not.
    cr_expect(!check_auth_header(greeting, AuthMessageType::Proof).is_ok());
    cr_expect(check_auth_header(std::span(greeting).first(3), AuthMessageType::Greeting).is_ok());
    cr_expect(check_auth_header(greeting, AuthMessageType::Greeting).is_ok());
    auto old_version = greeting;
    old_version[4] = 2;  // version 2: every rail ran the challenge-response
    Status s = check_auth_header(old_version, AuthMessageType::Greeting);
    cr_expect(!s.is_ok());
    cr_expect(s.message().find("version 2") != std::string::npos, "%s", s.message().c_str());
    cr_expect(is_other_auth_version(old_version));
    cr_expect(!is_other_auth_version(greeting));
    cr_expect(!is_other_auth_version(http));
    // What the responder answers it with: the initiator's check names both versions.
    auto no = refusal();
    Status refused = check_auth_header(no, AuthMessageType::Answer);
    cr_expect_eq(refused.code(), Code::Unsupported);
    cr_expect(refused.message().find("refused") != std::string::npos, "%s", refused.message().c_str());
    cr_expect(!check_auth_header(no, AuthMessageType::RailAccept).is_ok());
    // A side with authentication off opens with a plain frame, and is
    // refused with the reason: both sides then name the mismatch.
    const std::uint8_t plain[] = {'T', 'E', 'N', 'T', 1, 2, 0, 0};
    cr_expect(is_plain_frame(plain));
    cr_expect(!is_plain_frame(greeting));
    cr_expect(!is_auth_message(plain));
    cr_expect(is_auth_message(greeting));
    cr_expect(!is_auth_message(std::span(greeting).first(3)), "three bytes say nothing yet");
    Status off = check_auth_header(plain, AuthMessageType::Greeting);
    cr_expect_eq(off.code(), Code::Unsupported);
    cr_expect(off.message().find("on at one end and off at the other") != std::string::npos, "%s",
              off.message().c_str());
    auto mismatch = refusal(RefusalReason::AuthMismatch);
    Status told = check_auth_header(mismatch, AuthMessageType::Answer);
    cr_expect_eq(told.message(), auth_mismatch().message());
    cr_expect(refused.message() != told.message(), "a version refusal still names the versions");
    // Only an Answer has a count, and at most kMaxRailTokens.
    auto counted = greeting;
    counted[6] = 1;
    cr_expect(!check_auth_header(counted, AuthMessageType::Greeting).is_ok());
    std::uint8_t answer_header[kAuthHeaderSize] = {'T', 'N', 'T', 'A', kAuthVersion,
                                                   static_cast<std::uint8_t>(AuthMessageType::Answer), kMaxRailTokens, 0};
    auto size = answer_size(answer_header);
    cr_assert(size.is_ok());
    cr_expect_eq(*size, kAnswerSize + kMaxRailTokens * kRailTokenSize);
    answer_header[6] = kMaxRailTokens + 1;
    cr_expect(!answer_size(answer_header).is_ok());
}

Test(auth_handshake, rail_tokens_travel_in_the_answer_under_both_macs) {
    const std::vector<RailToken> tokens = {token(1, 1), token(2, 2)};
    AuthResponder r(nonce(1));
    AuthInitiator i(nonce(2));
    auto answer = r.on_greeting(i.greeting(), kKey, tokens);
    cr_assert(answer.is_ok());
    cr_expect_eq(answer->size(), kAnswerSize + 2 * kRailTokenSize);
    auto size = answer_size(std::span(*answer).first(kAuthHeaderSize));
    cr_assert(size.is_ok());
    cr_expect_eq(*size, answer->size());
    auto proof = i.on_answer(*answer, kKey);
    cr_assert(proof.is_ok(), "%s", proof.status().to_string().c_str());
    cr_expect(i.rail_tokens() == tokens);
    cr_expect(r.on_proof(*proof, kKey).is_ok());

    // A token altered on the way: the initiator refuses the answer...
    AuthResponder r2(nonce(1));
    AuthInitiator i2(nonce(2));
    auto answer2 = r2.on_greeting(i2.greeting(), kKey, tokens);
    cr_assert(answer2.is_ok());
    Bytes altered = *answer2;
    altered.back() ^= 1;
    cr_expect(!i2.on_answer(altered, kKey).is_ok());
    cr_expect(i2.rail_tokens().empty(), "no token of a refused answer is used");
    // ...and a proof made for altered tokens does not pass the responder.
    cr_expect(!r2.on_proof(proof_with(kKey, altered, nonce(2)), kKey).is_ok());
    // An answer without its tokens is truncated.
    AuthInitiator i3(nonce(2));
    cr_expect(!i3.on_answer(std::span(*answer2).first(kAnswerSize), kKey).is_ok());
    // More tokens than an answer holds are not sent.
    std::vector<RailToken> many(kMaxRailTokens + 1);
    AuthResponder r4(nonce(1));
    cr_expect(!r4.on_greeting(i2.greeting(), kKey, many).is_ok());
}

Test(auth_handshake, rail_open_and_accept_carry_one_token_each) {
    const RailToken t = token(3, 9);
    auto open = rail_open(t.from_initiator);
    auto shown = rail_token_of(open, AuthMessageType::RailOpen);
    cr_assert(shown.is_ok());
    cr_expect(*shown == t.from_initiator);
    cr_expect(!rail_token_of(open, AuthMessageType::RailAccept).is_ok(), "an open is not an accept");
    auto accept = rail_accept(t.from_responder);
    auto back = rail_token_of(accept, AuthMessageType::RailAccept);
    cr_assert(back.is_ok());
    cr_expect(*back == t.from_responder);
    cr_expect(!rail_token_of(std::span(accept).first(kRailAcceptSize - 1), AuthMessageType::RailAccept).is_ok());
}

Test(auth_handshake, messages_out_of_turn_fail) {
    // A proof before any greeting.
    AuthResponder r(nonce(1));
    ProofBytes proof{};
    cr_expect(!r.on_proof(proof, kKey).is_ok());
    cr_expect(r.state() == AuthResponder::State::Failed);

    Transcript t = run(1, 2);
    AuthResponder r2(nonce(1));
    AuthInitiator i2(nonce(2));
    auto answer = r2.on_greeting(i2.greeting(), kKey);
    cr_assert(answer.is_ok());
    cr_expect(!r2.on_greeting(i2.greeting(), kKey).is_ok());  // a second greeting
    cr_expect(r2.state() == AuthResponder::State::Failed);

    AuthResponder r3(nonce(1));
    AuthInitiator i3(nonce(2));
    auto answer3 = r3.on_greeting(i3.greeting(), kKey);
    cr_assert(answer3.is_ok());
    auto proof3 = i3.on_answer(*answer3, kKey);
    cr_assert(proof3.is_ok());
    cr_assert(r3.on_proof(*proof3, kKey).is_ok());
    Status twice = r3.on_proof(*proof3, kKey);  // a second proof on the same connection
    cr_expect(!twice.is_ok());
    cr_expect(twice.message().find("twice") != std::string::npos, "%s", twice.message().c_str());
    cr_expect(!i3.on_answer(*answer3, kKey).is_ok());  // a second answer
    cr_expect(!i3.on_answer(t.answer, kKey).is_ok());
}
