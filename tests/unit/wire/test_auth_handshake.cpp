// The job-key handshake as pure functions: both ends with the same key
// authenticate; a wrong key, a replayed proof or confirmation, a reflected
// message, garbage, a truncated message and messages out of turn all fail,
// and a failed state machine stays failed.
#include <criterion/criterion.h>

#include <string>

#include "common/job_key_cell.h"
#include "wire/auth_handshake.h"

using namespace tent;
using namespace tent::wire;

namespace {

JobKey key_of(const std::string& s) { return JobKey(s.begin(), s.end()); }
const JobKey kKey = key_of("the job's key, 32 bytes or so...");
const JobKey kOtherKey = key_of("a stranger's key of similar size");

Nonce nonce(std::uint8_t seed) {
    Nonce n;
    for (std::size_t i = 0; i < n.size(); ++i) n[i] = static_cast<std::uint8_t>(seed * 31 + i);
    return n;
}

struct Transcript {
    ChallengeBytes challenge;
    ProofBytes proof;
    ConfirmBytes confirm;
};

// One complete exchange; asserts that it succeeds.
Transcript run(std::uint8_t seed_r, std::uint8_t seed_i) {
    AuthResponder r(nonce(seed_r));
    AuthInitiator i(nonce(seed_i));
    Transcript t;
    t.challenge = r.challenge();
    auto proof = i.on_challenge(t.challenge, kKey);
    cr_assert(proof.is_ok(), "%s", proof.status().to_string().c_str());
    t.proof = *proof;
    auto confirm = r.on_proof(t.proof, kKey);
    cr_assert(confirm.is_ok(), "%s", confirm.status().to_string().c_str());
    t.confirm = *confirm;
    cr_assert(i.on_confirm(t.confirm, kKey).is_ok());
    cr_expect(r.state() == AuthResponder::State::Done);
    cr_expect(i.state() == AuthInitiator::State::Done);
    return t;
}

} // namespace

Test(auth_handshake, same_key_authenticates_both_ways_and_no_key_on_the_wire) {
    Transcript t = run(1, 2);
    // Neither the key nor any 8-byte piece of it appears in what was sent.
    std::string wire(t.challenge.begin(), t.challenge.end());
    wire.append(t.proof.begin(), t.proof.end());
    wire.append(t.confirm.begin(), t.confirm.end());
    for (std::size_t at = 0; at + 8 <= kKey.size(); ++at)
        cr_expect_eq(wire.find(std::string(kKey.begin() + at, kKey.begin() + at + 8)), std::string::npos);
}

Test(auth_handshake, fresh_nonces_make_fresh_messages) {
    Transcript a = run(1, 2);
    Transcript b = run(3, 4);
    cr_expect(a.challenge != b.challenge);
    cr_expect(a.proof != b.proof);
    cr_expect(a.confirm != b.confirm);
}

Test(auth_handshake, responder_refuses_a_wrong_key) {
    AuthResponder r(nonce(1));
    AuthInitiator i(nonce(2));
    auto proof = i.on_challenge(r.challenge(), kOtherKey);
    cr_assert(proof.is_ok());
    auto confirm = r.on_proof(*proof, kKey);
    cr_assert(!confirm.is_ok());
    cr_expect_eq(confirm.status().code(), Code::PeerUnreachable);
    cr_expect(confirm.status().message().find("key") != std::string::npos, "%s", confirm.status().message().c_str());
    cr_expect(r.state() == AuthResponder::State::Failed);
    // Failed stays failed, even when the right proof follows.
    AuthInitiator good(nonce(2));
    auto right = good.on_challenge(r.challenge(), kKey);
    cr_assert(right.is_ok());
    cr_expect(!r.on_proof(*right, kKey).is_ok());
}

Test(auth_handshake, initiator_refuses_a_responder_with_a_wrong_key) {
    AuthResponder r(nonce(1));
    AuthInitiator i(nonce(2));
    auto proof = i.on_challenge(r.challenge(), kKey);
    cr_assert(proof.is_ok());
    // The impostor cannot check the proof, and answers with its own key.
    AuthResponder impostor(nonce(1));
    auto confirm = impostor.on_proof(*proof, kOtherKey);
    cr_assert(!confirm.is_ok());
    // Nor can it forge one: any 32 bytes fail.
    ConfirmBytes forged = r.challenge();
    forged[5] = static_cast<std::uint8_t>(AuthMessageType::Confirm);
    cr_expect(!i.on_confirm(forged, kKey).is_ok());
    cr_expect(i.state() == AuthInitiator::State::Failed);
}

Test(auth_handshake, replayed_proof_fails_on_a_new_challenge) {
    Transcript old = run(1, 2);
    AuthResponder r(nonce(9));  // a new connection: a new challenge
    auto confirm = r.on_proof(old.proof, kKey);
    cr_assert(!confirm.is_ok());
    cr_expect(r.state() == AuthResponder::State::Failed);
}

Test(auth_handshake, replayed_confirmation_fails_for_a_new_nonce) {
    Transcript old = run(1, 2);
    // A fake responder replays the old challenge, then the old confirmation.
    AuthInitiator i(nonce(7));
    auto proof = i.on_challenge(old.challenge, kKey);
    cr_assert(proof.is_ok());
    cr_expect(!i.on_confirm(old.confirm, kKey).is_ok());
}

Test(auth_handshake, a_proof_is_not_accepted_as_a_confirmation) {
    // Reflection: the initiator's own MAC sent back as the responder's.
    AuthResponder r(nonce(1));
    AuthInitiator i(nonce(2));
    auto proof = i.on_challenge(r.challenge(), kKey);
    cr_assert(proof.is_ok());
    ConfirmBytes reflected{};
    std::copy(proof->begin(), proof->begin() + kAuthHeaderSize, reflected.begin());
    reflected[5] = static_cast<std::uint8_t>(AuthMessageType::Confirm);
    std::copy(proof->begin() + kAuthHeaderSize + 32, proof->end(), reflected.begin() + kAuthHeaderSize);
    cr_expect(!i.on_confirm(reflected, kKey).is_ok());
}

Test(auth_handshake, a_challenge_echoing_the_initiators_nonce_is_refused) {
    AuthResponder mirror(nonce(2));
    AuthInitiator i(nonce(2));
    cr_expect(!i.on_challenge(mirror.challenge(), kKey).is_ok());
}

Test(auth_handshake, garbage_and_truncation_are_refused) {
    AuthResponder r(nonce(1));
    ProofBytes garbage;
    garbage.fill(0x41);
    cr_expect(!r.on_proof(garbage, kKey).is_ok());

    AuthResponder r2(nonce(1));
    AuthInitiator i(nonce(2));
    auto proof = i.on_challenge(r2.challenge(), kKey);
    cr_assert(proof.is_ok());
    cr_expect(!r2.on_proof(std::span(*proof).first(kProofSize - 1), kKey).is_ok());

    AuthInitiator i2(nonce(3));
    auto challenge = r.challenge();
    cr_expect(!i2.on_challenge(std::span(challenge).first(10), kKey).is_ok());
}

Test(auth_handshake, header_check_refuses_early) {
    const std::uint8_t http[] = {'G', 'E', 'T', ' '};
    cr_expect(!check_auth_header(http, AuthMessageType::Proof).is_ok());
    // The first byte alone is enough to refuse.
    cr_expect(!check_auth_header(std::span(http).first(1), AuthMessageType::Proof).is_ok());
    AuthResponder r(nonce(1));
    auto challenge = r.challenge();
    // A valid header of another type is refused, a prefix of the right one is not.
    cr_expect(!check_auth_header(challenge, AuthMessageType::Proof).is_ok());
    cr_expect(check_auth_header(std::span(challenge).first(3), AuthMessageType::Proof).is_ok());
    cr_expect(check_auth_header(challenge, AuthMessageType::Challenge).is_ok());
    auto bad_version = challenge;
    bad_version[4] = 99;
    cr_expect(!check_auth_header(bad_version, AuthMessageType::Challenge).is_ok());
}

Test(auth_handshake, messages_out_of_turn_fail) {
    AuthInitiator i(nonce(2));
    ConfirmBytes confirm{};
    cr_expect(!i.on_confirm(confirm, kKey).is_ok());  // before any challenge
    cr_expect(i.state() == AuthInitiator::State::Failed);

    Transcript t = run(1, 2);
    AuthResponder r(nonce(1));
    AuthInitiator i2(nonce(2));
    auto proof = i2.on_challenge(r.challenge(), kKey);
    cr_assert(proof.is_ok());
    cr_assert(r.on_proof(*proof, kKey).is_ok());
    cr_expect(!r.on_proof(*proof, kKey).is_ok());  // a second proof on the same connection
    cr_expect(!i2.on_challenge(t.challenge, kKey).is_ok());  // a second challenge
}
