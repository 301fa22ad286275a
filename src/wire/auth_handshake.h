// The challenge-response that opens every control connection and every TCP
// rail socket (tent(7), SECURITY). Both ends prove that they hold the job's
// key without sending it: each MACs (HMAC-SHA256 under the key) both ends'
// fresh nonces, so a recorded answer or proof is worth nothing on a later
// connection, and the two directions use different labels, so one end's
// MAC cannot be reflected back as the other's.
//
//   initiator (connects)                    responder (accepts)
//   Greeting{nonce_i} + its first frames ---->
//                                           (holds the frames, acts on none)
//                            <----  Answer{nonce_r, MAC(key, "responder", nonce_r, nonce_i)}
//                                   + its reply to the frames (HelloAck)
//   checks the MAC; closes if wrong
//   Proof{MAC(key, "initiator", nonce_r, nonce_i)} ---->
//   + whatever it sends next                checks the MAC; closes if wrong;
//                                           only now acts on the frames
//
// The initiator's first frames travel with its Greeting and the responder
// answers them together with its own proof, so authentication adds no
// round trip to a connection's set-up: the initiator waits for one reply,
// as without authentication, and its Proof goes out with its next bytes.
// The responder acts on nothing (no connection, no rail, no frame read
// beyond the opening ones) before that Proof has been checked. Messages
// have fixed sizes: no length field to lie about. Pure: nonces and the
// prepared key are passed in, no I/O (the sockets are
// transport/tcp/auth_socket.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/crypto.h"
#include "common/status.h"

namespace tent::wire {

using Nonce = std::array<std::uint8_t, 32>;

enum class AuthMessageType : std::uint8_t { Greeting = 1, Answer = 2, Proof = 3 };

// Magic "TNTA", version (kAuthVersion, protocol.h), type, two zero bytes.
inline constexpr std::size_t kAuthHeaderSize = 8;
inline constexpr std::size_t kGreetingSize = kAuthHeaderSize + 32;
inline constexpr std::size_t kAnswerSize = kAuthHeaderSize + 32 + 32;
inline constexpr std::size_t kProofSize = kAuthHeaderSize + 32;

using GreetingBytes = std::array<std::uint8_t, kGreetingSize>;
using AnswerBytes = std::array<std::uint8_t, kAnswerSize>;
using ProofBytes = std::array<std::uint8_t, kProofSize>;

// Checks the first kAuthHeaderSize bytes (or fewer, as far as they go) of a
// message expected to be of type `expected`, so that garbage is refused
// before the whole message has arrived.
Status check_auth_header(std::span<const std::uint8_t> prefix, AuthMessageType expected);

class AuthInitiator {
public:
    enum class State { AwaitingAnswer, Done, Failed };
    explicit AuthInitiator(const Nonce& mine) : nonce_i_(mine) {}

    GreetingBytes greeting() const;
    // The whole Answer: when the responder holds the key, State::Done and
    // the Proof to send; any error leaves State::Failed for good.
    Result<ProofBytes> on_answer(std::span<const std::uint8_t> answer, const HmacKey& key);
    State state() const { return state_; }

private:
    Nonce nonce_i_;
    State state_ = State::AwaitingAnswer;
};

class AuthResponder {
public:
    enum class State { AwaitingGreeting, AwaitingProof, Done, Failed };
    explicit AuthResponder(const Nonce& mine) : nonce_r_(mine) {}

    // The whole Greeting: the Answer to send.
    Result<AnswerBytes> on_greeting(std::span<const std::uint8_t> greeting, const HmacKey& key);
    // The whole Proof: ok and State::Done when the initiator holds the key.
    Status on_proof(std::span<const std::uint8_t> proof, const HmacKey& key);
    State state() const { return state_; }

private:
    Nonce nonce_r_;
    Nonce nonce_i_{};
    State state_ = State::AwaitingGreeting;
};

} // namespace tent::wire
