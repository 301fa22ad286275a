#include "wire/auth_handshake.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace tent::wire {

namespace {

constexpr std::uint8_t kMagic[4] = {'T', 'N', 'T', 'A'};
constexpr std::uint8_t kAuthVersion = 1;

// Distinct labels per direction: a MAC one side computed never verifies as
// the other side's.
constexpr std::string_view kInitiatorLabel = "tent auth v1 initiator";
constexpr std::string_view kResponderLabel = "tent auth v1 responder";

std::span<const std::uint8_t> bytes_of(std::string_view s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

void put_header(std::uint8_t* out, AuthMessageType type) {
    std::memcpy(out, kMagic, sizeof kMagic);
    out[4] = kAuthVersion;
    out[5] = static_cast<std::uint8_t>(type);
    out[6] = out[7] = 0;
}

Result<Mac> mac_of(std::string_view label, std::span<const std::uint8_t> key, const Nonce& nonce_r,
                   const Nonce& nonce_i) {
    return hmac_sha256(key, {bytes_of(label), nonce_r, nonce_i});
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
            if (i == 4) return refused("unknown authentication version");
            return refused("unexpected authentication message");
        }
    return Status::ok();
}

ChallengeBytes AuthResponder::challenge() const {
    ChallengeBytes out{};
    put_header(out.data(), AuthMessageType::Challenge);
    std::memcpy(out.data() + kAuthHeaderSize, nonce_r_.data(), nonce_r_.size());
    return out;
}

Result<ConfirmBytes> AuthResponder::on_proof(std::span<const std::uint8_t> proof, std::span<const std::uint8_t> key) {
    if (state_ != State::AwaitingProof) {
        state_ = State::Failed;
        return refused("a proof arrived twice");
    }
    state_ = State::Failed;  // until proven otherwise
    if (proof.size() != kProofSize) return refused("truncated proof");
    if (Status s = check_auth_header(proof, AuthMessageType::Proof); !s) return s;
    Nonce nonce_i;
    std::memcpy(nonce_i.data(), proof.data() + kAuthHeaderSize, nonce_i.size());
    // Our own nonce coming back is a reflection, never a peer's fresh one.
    if (nonce_i == nonce_r_) return refused("the proof reflects this side's challenge");
    auto expected = mac_of(kInitiatorLabel, key, nonce_r_, nonce_i);
    if (!expected) return expected.status();
    if (!equal_in_constant_time(*expected, proof.subspan(kAuthHeaderSize + nonce_i.size())))
        return refused("the peer does not hold this job's key");
    auto answer = mac_of(kResponderLabel, key, nonce_r_, nonce_i);
    if (!answer) return answer.status();
    ConfirmBytes out{};
    put_header(out.data(), AuthMessageType::Confirm);
    std::memcpy(out.data() + kAuthHeaderSize, answer->data(), answer->size());
    state_ = State::Done;
    return out;
}

Result<ProofBytes> AuthInitiator::on_challenge(std::span<const std::uint8_t> challenge,
                                               std::span<const std::uint8_t> key) {
    if (state_ != State::AwaitingChallenge) {
        state_ = State::Failed;
        return refused("a challenge arrived out of turn");
    }
    state_ = State::Failed;
    if (challenge.size() != kChallengeSize) return refused("truncated challenge");
    if (Status s = check_auth_header(challenge, AuthMessageType::Challenge); !s) return s;
    std::memcpy(nonce_r_.data(), challenge.data() + kAuthHeaderSize, nonce_r_.size());
    if (nonce_r_ == nonce_i_) return refused("the challenge reflects this side's nonce");
    auto mac = mac_of(kInitiatorLabel, key, nonce_r_, nonce_i_);
    if (!mac) return mac.status();
    ProofBytes out{};
    put_header(out.data(), AuthMessageType::Proof);
    std::memcpy(out.data() + kAuthHeaderSize, nonce_i_.data(), nonce_i_.size());
    std::memcpy(out.data() + kAuthHeaderSize + nonce_i_.size(), mac->data(), mac->size());
    state_ = State::AwaitingConfirm;
    return out;
}

Status AuthInitiator::on_confirm(std::span<const std::uint8_t> confirm, std::span<const std::uint8_t> key) {
    if (state_ != State::AwaitingConfirm) {
        state_ = State::Failed;
        return refused("a confirmation arrived out of turn");
    }
    state_ = State::Failed;
    if (confirm.size() != kConfirmSize) return refused("truncated confirmation");
    if (Status s = check_auth_header(confirm, AuthMessageType::Confirm); !s) return s;
    auto expected = mac_of(kResponderLabel, key, nonce_r_, nonce_i_);
    if (!expected) return expected.status();
    if (!equal_in_constant_time(*expected, confirm.subspan(kAuthHeaderSize)))
        return refused("the peer does not hold this job's key");
    state_ = State::Done;
    return Status::ok();
}

} // namespace tent::wire
