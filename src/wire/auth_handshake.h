// The challenge-response that opens every control connection (tent(7),
// SECURITY), and the one-time rail tokens that open its TCP rails. Both ends
// of a control connection prove that they hold the job's key without
// sending it: each MACs (HMAC-SHA256 under the key) both ends' fresh nonces
// and the rail tokens of the connection, so a recorded answer or proof is
// worth nothing on a later connection, and the two directions use
// different labels, so one end's MAC cannot be reflected back as the
// other's.
//
//   initiator (connects)                    responder (accepts)
//   Greeting{nonce_i} + its first frames ---->
//                                           (holds the frames, acts on none)
//            <----  Answer{nonce_r, MAC(key, "responder", nonce_r, nonce_i, tokens), tokens}
//                   + its reply to the frames (HelloAck)
//   checks the MAC; closes if wrong
//   Proof{MAC(key, "initiator", nonce_r, nonce_i, tokens)} ---->
//   + whatever it sends next                checks the MAC; closes if wrong;
//                                           only now acts on the frames
//
// The initiator's first frames travel with its Greeting and the responder
// answers them together with its own proof, so authentication adds no
// round trip to a connection's set-up. The responder acts on nothing (no
// connection, no rail, no frame read beyond the opening ones) before that
// Proof has been checked.
//
// Rail tokens: for each TCP rail it accepted, the Answer carries a pair of
// fresh random 32-byte tokens, one for each end to show on that rail's
// socket. The responder honours them only once the Proof (which MACs them)
// is right, each once, for that connection and rail only. A rail socket
// then opens with RailOpen{initiator's token} + its Hello; the responder
// compares the token in constant time and answers RailAccept{responder's
// token} + its HelloAck, which the initiator compares in turn: no nonce, no
// MAC and no extra write per rail. A rail is therefore authenticated as
// strongly as its control connection against an attacker who cannot read
// the traffic (one who can could take over any TCP connection of tent's
// anyway: frames are not MACed).
//
// A responder that gets a message of another authentication version
// answers with a Refusal naming its own version before it closes. Messages
// have fixed sizes (the Answer's follows from a bounded count in its
// header): no length field to lie about. Pure: nonces, tokens and the
// prepared key are passed in, no I/O (the sockets are
// transport/tcp/auth_socket.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/crypto.h"
#include "common/status.h"

namespace tent::wire {

using Nonce = std::array<std::uint8_t, 32>;
using RailTokenBytes = std::array<std::uint8_t, 32>;

enum class AuthMessageType : std::uint8_t {
    Greeting = 1,
    Answer = 2,
    Proof = 3,
    RailOpen = 4,    // initiator, first bytes of a TCP rail socket
    RailAccept = 5,  // responder's reply to a RailOpen
    Refusal = 6,     // responder: another version; the same value in every version
};

// The two tokens of one TCP rail (rail_id of its connection).
struct RailToken {
    std::uint16_t rail_id = 0;
    RailTokenBytes from_initiator{};  // shown in RailOpen
    RailTokenBytes from_responder{};  // shown in RailAccept
    bool operator==(const RailToken&) const = default;
};

// Magic "TNTA", version (kAuthVersion, protocol.h), type, a count (the
// Answer's rail tokens, else 0 or, in a Refusal, the reason), a zero byte.
inline constexpr std::size_t kAuthHeaderSize = 8;
inline constexpr std::size_t kGreetingSize = kAuthHeaderSize + 32;
inline constexpr std::size_t kAnswerSize = kAuthHeaderSize + 32 + 32;  // without rail tokens
inline constexpr std::size_t kRailTokenSize = 2 + 32 + 32;
inline constexpr std::size_t kProofSize = kAuthHeaderSize + 32;
inline constexpr std::size_t kRailOpenSize = kAuthHeaderSize + 32;
inline constexpr std::size_t kRailAcceptSize = kAuthHeaderSize + 32;
inline constexpr std::size_t kRefusalSize = kAuthHeaderSize;
// At most one token pair per TCP address of the peer (kMaxTcpAddresses).
inline constexpr std::size_t kMaxRailTokens = 16;

using GreetingBytes = std::array<std::uint8_t, kGreetingSize>;
using ProofBytes = std::array<std::uint8_t, kProofSize>;
using RailOpenBytes = std::array<std::uint8_t, kRailOpenSize>;
using RailAcceptBytes = std::array<std::uint8_t, kRailAcceptSize>;
using RefusalBytes = std::array<std::uint8_t, kRefusalSize>;

// Checks the first kAuthHeaderSize bytes (or fewer, as far as they go) of a
// message expected to be of type `expected`, so that garbage is refused
// before the whole message has arrived. A Refusal from the peer is an
// error naming both versions, or auth_mismatch(); so is a plain tent
// frame where an authentication message belongs.
Status check_auth_header(std::span<const std::uint8_t> prefix, AuthMessageType expected);
// Whether prefix is a tent authentication header of another version (the
// responder then sends refusal() before closing).
bool is_other_auth_version(std::span<const std::uint8_t> prefix);
// Why a side refuses before closing (the Refusal's count byte).
enum class RefusalReason : std::uint8_t {
    OtherVersion = 1,  // another version of this handshake
    AuthMismatch = 2,  // one side has authentication on, the other off
};
RefusalBytes refusal(RefusalReason why = RefusalReason::OtherVersion);
// Whether prefix (4 bytes or more) starts with this handshake's magic: a
// side with authentication off received a message of one with it on.
bool is_auth_message(std::span<const std::uint8_t> prefix);
// Whether prefix (4 bytes or more) starts with a plain tent frame's magic:
// a side with authentication on received the opening of one with it off.
bool is_plain_frame(std::span<const std::uint8_t> prefix);
// What both sides report when one has authentication on and the other off
// (rather than a bare close or "not a tent"): the fix is the same on both.
Status auth_mismatch();
// The whole size of the Answer whose header is `header` (kAuthHeaderSize
// bytes), after check_auth_header.
Result<std::size_t> answer_size(std::span<const std::uint8_t> header);

RailOpenBytes rail_open(const RailTokenBytes& token);
RailAcceptBytes rail_accept(const RailTokenBytes& token);
// The token a whole RailOpen or RailAccept carries.
Result<RailTokenBytes> rail_token_of(std::span<const std::uint8_t> message, AuthMessageType type);

class AuthInitiator {
public:
    enum class State { AwaitingAnswer, Done, Failed };
    explicit AuthInitiator(const Nonce& mine) : nonce_i_(mine) {}

    GreetingBytes greeting() const;
    // The whole Answer: when the responder holds the key, State::Done and
    // the Proof to send; any error leaves State::Failed for good.
    Result<ProofBytes> on_answer(std::span<const std::uint8_t> answer, const HmacKey& key);
    State state() const { return state_; }
    // The rail tokens of a checked Answer.
    const std::vector<RailToken>& rail_tokens() const { return tokens_; }

private:
    Nonce nonce_i_;
    State state_ = State::AwaitingAnswer;
    std::vector<RailToken> tokens_;
};

class AuthResponder {
public:
    enum class State { AwaitingGreeting, AwaitingProof, Done, Failed };
    explicit AuthResponder(const Nonce& mine) : nonce_r_(mine) {}

    // The whole Greeting and the rail tokens (at most kMaxRailTokens) of
    // the rails this side accepts: the Answer to send.
    Result<std::vector<std::uint8_t>> on_greeting(std::span<const std::uint8_t> greeting, const HmacKey& key,
                                                  std::span<const RailToken> tokens = {});
    // The whole Proof: ok and State::Done when the initiator holds the key.
    Status on_proof(std::span<const std::uint8_t> proof, const HmacKey& key);
    State state() const { return state_; }

private:
    Nonce nonce_r_;
    Nonce nonce_i_{};
    std::vector<std::uint8_t> tokens_;  // as encoded in the Answer, MACed by both
    State state_ = State::AwaitingGreeting;
};

} // namespace tent::wire
