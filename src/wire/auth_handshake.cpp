#include "wire/auth_handshake.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "wire/byte_reader.h"
#include "wire/protocol.h"

namespace tent::wire {

namespace {

constexpr std::uint8_t kAuthMagic[4] = {'T', 'N', 'T', 'A'};
constexpr std::size_t kAuthMagicSize = sizeof kAuthMagic;

// Distinct labels per direction: a MAC one side computed never verifies as
// the other side's.
constexpr std::string_view kInitiatorLabel = "tent auth v3 initiator";
constexpr std::string_view kResponderLabel = "tent auth v3 responder";

std::span<const std::uint8_t> bytes_of(std::string_view s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

void put_header(std::uint8_t* out, AuthMessageType type, std::uint8_t count = 0) {
    std::memcpy(out, kAuthMagic, sizeof kAuthMagic);
    out[4] = kAuthVersion;
    out[5] = static_cast<std::uint8_t>(type);
    out[6] = count;
    out[7] = 0;
}

Result<Mac> mac_of(std::string_view label, const HmacKey& key, const Nonce& nonce_r, const Nonce& nonce_i,
                   std::span<const std::uint8_t> tokens) {
    return key.mac({bytes_of(label), nonce_r, nonce_i, tokens});
}

Status refused(const std::string& why) { return Status(Code::PeerUnreachable, "authentication failed: " + why); }

bool magic_matches(std::span<const std::uint8_t> prefix) {
    const std::size_t n = std::min<std::size_t>(prefix.size(), sizeof kAuthMagic);
    return std::equal(prefix.begin(), prefix.begin() + static_cast<std::ptrdiff_t>(n), kAuthMagic);
}

} // namespace

Status check_auth_header(std::span<const std::uint8_t> prefix, AuthMessageType expected) {
    if (is_plain_frame(prefix)) return auth_mismatch();
    if (!magic_matches(prefix)) return refused("not a tent authentication message (is the peer a tent?)");
    if (prefix.size() > 6 && prefix[5] == static_cast<std::uint8_t>(AuthMessageType::Refusal) &&
        prefix[6] == static_cast<std::uint8_t>(RefusalReason::AuthMismatch))
        return auth_mismatch();
    if (prefix.size() > 5 && prefix[5] == static_cast<std::uint8_t>(AuthMessageType::Refusal))
        return Status(Code::Unsupported, "authentication refused: the peer speaks authentication version " +
                                             std::to_string(prefix[4]) + ", this side " +
                                             std::to_string(kAuthVersion) + " (use the same tent on every host)");
    if (prefix.size() > 4 && prefix[4] != kAuthVersion)
        return Status(Code::Unsupported, "authentication failed: the peer speaks authentication version " +
                                             std::to_string(prefix[4]) + ", this side " +
                                             std::to_string(kAuthVersion) + " (use the same tent on every host)");
    if (prefix.size() > 5 && prefix[5] != static_cast<std::uint8_t>(expected))
        return refused("unexpected authentication message");
    if (prefix.size() > 6 && prefix[6] != 0 && !(expected == AuthMessageType::Answer && prefix[6] <= kMaxRailTokens))
        return refused("bad count in an authentication message");
    if (prefix.size() > 7 && prefix[7] != 0) return refused("bad authentication header");
    return Status::ok();
}

bool is_other_auth_version(std::span<const std::uint8_t> prefix) {
    return prefix.size() > 4 && magic_matches(prefix) && prefix[4] != kAuthVersion;
}

RefusalBytes refusal(RefusalReason why) {
    RefusalBytes out{};
    put_header(out.data(), AuthMessageType::Refusal, static_cast<std::uint8_t>(why));
    return out;
}

bool is_auth_message(std::span<const std::uint8_t> prefix) {
    return prefix.size() >= kAuthMagicSize && magic_matches(prefix);
}

bool is_plain_frame(std::span<const std::uint8_t> prefix) {
    // A frame header starts with wire::kMagic, read as frame_header.cpp does.
    std::uint32_t magic = 0;
    ByteReader r(prefix);
    return r.u32(magic, "magic") && magic == wire::kMagic;
}

Status auth_mismatch() {
    return Status(Code::Unsupported,
                  "authentication failed: authentication is on at one end and off at the other (auth, "
                  "tent.conf(5)): set it alike for every process of the job");
}

Result<std::size_t> answer_size(std::span<const std::uint8_t> header) {
    if (header.size() < kAuthHeaderSize) return refused("truncated answer");
    if (Status s = check_auth_header(header, AuthMessageType::Answer); !s) return s;
    return kAnswerSize + header[6] * kRailTokenSize;
}

RailOpenBytes rail_open(const RailTokenBytes& token) {
    RailOpenBytes out{};
    put_header(out.data(), AuthMessageType::RailOpen);
    std::memcpy(out.data() + kAuthHeaderSize, token.data(), token.size());
    return out;
}

RailAcceptBytes rail_accept(const RailTokenBytes& token) {
    RailAcceptBytes out{};
    put_header(out.data(), AuthMessageType::RailAccept);
    std::memcpy(out.data() + kAuthHeaderSize, token.data(), token.size());
    return out;
}

Result<RailTokenBytes> rail_token_of(std::span<const std::uint8_t> message, AuthMessageType type) {
    if (message.size() != kAuthHeaderSize + RailTokenBytes{}.size()) return refused("truncated rail token");
    if (Status s = check_auth_header(message, type); !s) return s;
    RailTokenBytes token;
    std::memcpy(token.data(), message.data() + kAuthHeaderSize, token.size());
    return token;
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
    auto size = answer_size(answer);
    if (!size) return size.status();
    if (answer.size() != *size) return refused("truncated answer");
    Nonce nonce_r;
    std::memcpy(nonce_r.data(), answer.data() + kAuthHeaderSize, nonce_r.size());
    // Our own nonce coming back is a reflection, never a peer's fresh one.
    if (nonce_r == nonce_i_) return refused("the answer reflects this side's greeting");
    const auto tokens = answer.subspan(kAnswerSize);
    auto expected = mac_of(kResponderLabel, key, nonce_r, nonce_i_, tokens);
    if (!expected) return expected.status();
    if (!equal_in_constant_time(*expected, answer.subspan(kAuthHeaderSize + nonce_r.size(), expected->size())))
        return refused("the peer does not hold this job's key");
    auto mac = mac_of(kInitiatorLabel, key, nonce_r, nonce_i_, tokens);
    if (!mac) return mac.status();
    tokens_.clear();
    for (std::size_t at = 0; at < tokens.size(); at += kRailTokenSize) {
        RailToken t;
        t.rail_id = static_cast<std::uint16_t>(tokens[at] << 8 | tokens[at + 1]);
        std::memcpy(t.from_initiator.data(), tokens.data() + at + 2, t.from_initiator.size());
        std::memcpy(t.from_responder.data(), tokens.data() + at + 2 + 32, t.from_responder.size());
        tokens_.push_back(t);
    }
    ProofBytes out{};
    put_header(out.data(), AuthMessageType::Proof);
    std::memcpy(out.data() + kAuthHeaderSize, mac->data(), mac->size());
    state_ = State::Done;
    return out;
}

Result<std::vector<std::uint8_t>> AuthResponder::on_greeting(std::span<const std::uint8_t> greeting,
                                                             const HmacKey& key, std::span<const RailToken> tokens) {
    if (state_ != State::AwaitingGreeting) {
        state_ = State::Failed;
        return refused("a greeting arrived out of turn");
    }
    state_ = State::Failed;
    if (tokens.size() > kMaxRailTokens) return Status(Code::InvalidArgument, "more rail tokens than an answer holds");
    if (greeting.size() != kGreetingSize) return refused("truncated greeting");
    if (Status s = check_auth_header(greeting, AuthMessageType::Greeting); !s) return s;
    std::memcpy(nonce_i_.data(), greeting.data() + kAuthHeaderSize, nonce_i_.size());
    if (nonce_i_ == nonce_r_) return refused("the greeting reflects this side's nonce");
    tokens_.clear();
    for (const RailToken& t : tokens) {
        tokens_.push_back(static_cast<std::uint8_t>(t.rail_id >> 8));
        tokens_.push_back(static_cast<std::uint8_t>(t.rail_id));
        tokens_.insert(tokens_.end(), t.from_initiator.begin(), t.from_initiator.end());
        tokens_.insert(tokens_.end(), t.from_responder.begin(), t.from_responder.end());
    }
    auto mac = mac_of(kResponderLabel, key, nonce_r_, nonce_i_, tokens_);
    if (!mac) return mac.status();
    std::vector<std::uint8_t> out(kAnswerSize);
    put_header(out.data(), AuthMessageType::Answer, static_cast<std::uint8_t>(tokens.size()));
    std::memcpy(out.data() + kAuthHeaderSize, nonce_r_.data(), nonce_r_.size());
    std::memcpy(out.data() + kAuthHeaderSize + nonce_r_.size(), mac->data(), mac->size());
    out.insert(out.end(), tokens_.begin(), tokens_.end());
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
    auto expected = mac_of(kInitiatorLabel, key, nonce_r_, nonce_i_, tokens_);
    if (!expected) return expected.status();
    if (!equal_in_constant_time(*expected, proof.subspan(kAuthHeaderSize)))
        return refused("the peer does not hold this job's key");
    state_ = State::Done;
    return Status::ok();
}

} // namespace tent::wire
