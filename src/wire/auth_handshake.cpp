#include "wire/auth_handshake.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "wire/protocol.h"

namespace tent::wire {

namespace {

constexpr std::uint8_t kMagic[4] = {'T', 'N', 'T', 'A'};

// Distinct labels per direction: a MAC one side computed never verifies as
// the other side's.
constexpr std::string_view kInitiatorLabel = "tent auth v2 initiator";
constexpr std::string_view kResponderLabel = "tent auth v2 responder";

std::span<const std::uint8_t> bytes_of(std::string_view s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

void put_header(std::uint8_t* out, AuthMessageType type) {
    std::memcpy(out, kMagic, sizeof kMagic);
    out[4] = kAuthVersion;
    out[5] = static_cast<std::uint8_t>(type);
    out[6] = out[7] = 0;
}

Result<Mac> mac_of(std::string_view label, const HmacKey& key, const Nonce& nonce_r, const Nonce& nonce_i) {
    return key.mac({bytes_of(label), nonce_r, nonce_i});
}

Status refused(const char* why) { return Status(Code::PeerUnreachable, std::string("authentication failed: ") + why); }

} // namespace

Status check_auth_header(std::span<const std::uint8_t> prefix, AuthMessageType expected) {
    const std::size_t n = std::min(prefix.size(), kAuthHeaderSize);
    std::uint8_t want[kAuthHeaderSize];
    put_header(want, expected);
    for (std::size_t i = 0; i < n; ++i)
        if (prefix[i] != want[i]) {
            if (i < 4) return refused("not a tent authentication message (is the peer a tent of the same version?)");
            if (i == 4) return refused("unknown authentication version (is the peer a tent of the same version?)");
            return refused("unexpected authentication message");
        }
    return Status::ok();
}

GreetingBytes AuthInitiator::greeting() const {
    GreetingBytes out{};
    put_header(out.data(), AuthMessageType::Greeting);
    std::memcpy(out.data() + kAuthHeaderSize, nonce_i_.data(), nonce_i_.size());
    return out;
}

Result<ProofBytes> AuthInitiator::on_answer(std::span<const std::uint8_t> answer, const HmacKey& key) {
    if (state_ != State::AwaitingAnswer) {
        state_ = State::Failed;
        return refused("an answer arrived out of turn");
    }
    state_ = State::Failed;  // until proven otherwise
    if (answer.size() != kAnswerSize) return refused("truncated answer");
    if (Status s = check_auth_header(answer, AuthMessageType::Answer); !s) return s;
    Nonce nonce_r;
    std::memcpy(nonce_r.data(), answer.data() + kAuthHeaderSize, nonce_r.size());
    // Our own nonce coming back is a reflection, never a peer's fresh one.
    if (nonce_r == nonce_i_) return refused("the answer reflects this side's greeting");
    auto expected = mac_of(kResponderLabel, key, nonce_r, nonce_i_);
    if (!expected) return expected.status();
    if (!equal_in_constant_time(*expected, answer.subspan(kAuthHeaderSize + nonce_r.size())))
        return refused("the peer does not hold this job's key");
    auto mac = mac_of(kInitiatorLabel, key, nonce_r, nonce_i_);
    if (!mac) return mac.status();
    ProofBytes out{};
    put_header(out.data(), AuthMessageType::Proof);
    std::memcpy(out.data() + kAuthHeaderSize, mac->data(), mac->size());
    state_ = State::Done;
    return out;
}

Result<AnswerBytes> AuthResponder::on_greeting(std::span<const std::uint8_t> greeting, const HmacKey& key) {
    if (state_ != State::AwaitingGreeting) {
        state_ = State::Failed;
        return refused("a greeting arrived out of turn");
    }
    state_ = State::Failed;
    if (greeting.size() != kGreetingSize) return refused("truncated greeting");
    if (Status s = check_auth_header(greeting, AuthMessageType::Greeting); !s) return s;
    std::memcpy(nonce_i_.data(), greeting.data() + kAuthHeaderSize, nonce_i_.size());
    if (nonce_i_ == nonce_r_) return refused("the greeting reflects this side's nonce");
    auto mac = mac_of(kResponderLabel, key, nonce_r_, nonce_i_);
    if (!mac) return mac.status();
    AnswerBytes out{};
    put_header(out.data(), AuthMessageType::Answer);
    std::memcpy(out.data() + kAuthHeaderSize, nonce_r_.data(), nonce_r_.size());
    std::memcpy(out.data() + kAuthHeaderSize + nonce_r_.size(), mac->data(), mac->size());
    state_ = State::AwaitingProof;
    return out;
}

Status AuthResponder::on_proof(std::span<const std::uint8_t> proof, const HmacKey& key) {
    if (state_ != State::AwaitingProof) {
        const bool twice = state_ == State::Done;
        state_ = State::Failed;
        return refused(twice ? "a proof arrived twice" : "a proof arrived out of turn");
    }
    state_ = State::Failed;
    if (proof.size() != kProofSize) return refused("truncated proof");
    if (Status s = check_auth_header(proof, AuthMessageType::Proof); !s) return s;
    auto expected = mac_of(kInitiatorLabel, key, nonce_r_, nonce_i_);
    if (!expected) return expected.status();
    if (!equal_in_constant_time(*expected, proof.subspan(kAuthHeaderSize)))
        return refused("the peer does not hold this job's key");
    state_ = State::Done;
    return Status::ok();
}

} // namespace tent::wire
