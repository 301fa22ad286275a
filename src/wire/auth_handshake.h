// The challenge-response that opens every control connection and every TCP
// rail socket, before any frame (tent(7), SECURITY). Both ends prove that
// they hold the job's key without sending it: each MACs (HMAC-SHA256 under
// the key) both ends' fresh nonces, so a recorded answer is worth nothing
// on a later connection, and the two directions use different labels, so
// one end's answer cannot be reflected back as the other's.
//
//   initiator (connects)                    responder (accepts)
//                                   <----   Challenge{nonce_r}
//   Proof{nonce_i, MAC(key, "initiator", nonce_r, nonce_i)}  ---->
//                                           checks the MAC; closes if wrong
//                                   <----   Confirm{MAC(key, "responder", nonce_r, nonce_i)}
//   checks the MAC; closes if wrong
//
// The responder speaks first, so the initiator can send its first frame
// (Hello) right behind the Proof, and a stranger learns nothing keyed
// before it has proved itself. Messages have fixed sizes: no length field
// to lie about. Pure: nonces are passed in, no I/O (the sockets are
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

enum class AuthMessageType : std::uint8_t { Challenge = 1, Proof = 2, Confirm = 3 };

// Magic "TNTA", version, type, two zero bytes.
inline constexpr std::size_t kAuthHeaderSize = 8;
inline constexpr std::size_t kChallengeSize = kAuthHeaderSize + 32;
inline constexpr std::size_t kProofSize = kAuthHeaderSize + 32 + 32;
inline constexpr std::size_t kConfirmSize = kAuthHeaderSize + 32;

using ChallengeBytes = std::array<std::uint8_t, kChallengeSize>;
using ProofBytes = std::array<std::uint8_t, kProofSize>;
using ConfirmBytes = std::array<std::uint8_t, kConfirmSize>;

// Checks the first kAuthHeaderSize bytes (or fewer, as far as they go) of a
// message expected to be of type `expected`, so that garbage is refused
// before the whole message has arrived.
Status check_auth_header(std::span<const std::uint8_t> prefix, AuthMessageType expected);

class AuthResponder {
public:
    enum class State { AwaitingProof, Done, Failed };
    explicit AuthResponder(const Nonce& mine) : nonce_r_(mine) {}

    ChallengeBytes challenge() const;
    // The whole Proof: on success the Confirm to send and State::Done; any
    // error leaves State::Failed for good.
    Result<ConfirmBytes> on_proof(std::span<const std::uint8_t> proof, std::span<const std::uint8_t> key);
    State state() const { return state_; }

private:
    Nonce nonce_r_;
    State state_ = State::AwaitingProof;
};

class AuthInitiator {
public:
    enum class State { AwaitingChallenge, AwaitingConfirm, Done, Failed };
    explicit AuthInitiator(const Nonce& mine) : nonce_i_(mine) {}

    // The whole Challenge: the Proof to send.
    Result<ProofBytes> on_challenge(std::span<const std::uint8_t> challenge, std::span<const std::uint8_t> key);
    // The whole Confirm: ok and State::Done when the responder holds the key.
    Status on_confirm(std::span<const std::uint8_t> confirm, std::span<const std::uint8_t> key);
    State state() const { return state_; }

private:
    Nonce nonce_i_;
    Nonce nonce_r_{};
    State state_ = State::AwaitingChallenge;
};

} // namespace tent::wire
