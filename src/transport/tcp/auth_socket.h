// The job-key handshake (wire/auth_handshake.h) on sockets: both halves of
// it for every control connection and TCP rail socket, before any frame is
// acted on.
//
// Connecting side (blocking up to a deadline, like the connect paths that
// call it): AuthProver::open() sends the Greeting and the caller's first
// frames in one write; prove() reads the responder's Answer, checks it and
// sends the Proof; the caller then reads the reply to its frames, which
// came right behind the Answer (prove() hands over what it read of it). No round trip is added: the Proof goes out
// without waiting for anything. A TCP rail of a connection set up so opens
// with rail_token_open() and checks the reply with rail_token_check(); a
// rail that reconnects later runs the whole challenge-response
// (tcp_redial.h).
//
// Accepting side (never blocking: strangers must not stall the progress
// thread): AuthGate holds freshly accepted sockets until they have proved
// themselves, each for at most the connect timeout and at most kMaxPending
// at once. It reads the Greeting (or RailOpen) and the frames that follow it
// (a fixed count, bounded in size), answers with the Answer and the owner's
// reply to those frames (the owner's answerer computes the reply without
// acting on anything), and hands the socket over, with what the answerer
// kept, only once the Proof is right, or at once when a RailOpen showed a
// token entered with enter_rail_tokens(). A socket that fails is closed and
// logged (rate-limited); it costs the job nothing else. A greeting of
// another authentication version is answered with a Refusal first.
#pragma once

#include <any>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/job_key_cell.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "transport/tcp/rail_token_book.h"
#include "wire/auth_handshake.h"

namespace tent::tcp {

class AuthProver {
public:
    // With authentication off (keys.required() false) open() sends the
    // frames alone and prove() does nothing.
    static Result<AuthProver> start(const JobKeyCell& keys);
    // The Greeting and the caller's first frames, in one write.
    Status open(int fd, std::span<const std::uint8_t> frames, TimePoint deadline);
    // Reads and checks the Answer, then sends the Proof (at once: the peer
    // makes nothing for this socket before it, and sending it later, after
    // the whole set-up, measured slower). Returns the bytes of the reply
    // that arrived with the Answer (none with authentication off), where
    // the caller's reading of that reply begins. The socket is
    // non-blocking, or blocking with a receive timeout.
    Result<std::vector<std::uint8_t>> prove(int fd, TimePoint deadline);
    bool required() const { return key_ != nullptr; }
    // The rail tokens the checked Answer carried.
    const std::vector<wire::RailToken>& rail_tokens() const { return auth_.rail_tokens(); }

private:
    AuthProver(std::shared_ptr<const HmacKey> key, const wire::Nonce& nonce) : key_(std::move(key)), auth_(nonce) {}
    std::shared_ptr<const HmacKey> key_;  // null: authentication off
    wire::AuthInitiator auth_;
};

// Fresh random tokens for these TCP rails of a connection being answered.
Result<std::vector<wire::RailToken>> draw_rail_tokens(std::span<const std::uint16_t> rail_ids);
// A TCP rail's opening with a token: RailOpen{show} and the frames, in one write.
Status rail_token_open(int fd, const wire::RailTokenBytes& show, std::span<const std::uint8_t> frames,
                       TimePoint deadline);
// Reads the responder's RailAccept and compares its token with `expected`
// in constant time. Reads the header of the HelloAck behind it in the same
// read (and not a byte more: the rail's frames may follow), and returns it,
// where the caller's reading of the HelloAck begins.
Result<std::vector<std::uint8_t>> rail_token_check(int fd, const wire::RailTokenBytes& expected, TimePoint deadline);

class AuthGate {
public:
    static constexpr std::size_t kMaxPending = 64;
    // Bytes of frames a greeting may bring (an address blob and a Hello are
    // a few hundred).
    static constexpr std::size_t kMaxOpening = 64 * 1024;

    // The owner's reply to the frames behind a Greeting, sent right behind
    // the Answer, and what it keeps for the moment the Proof is right.
    struct Reply {
        std::vector<std::uint8_t> bytes;
        std::any held;
        // Control connections: tokens for the TCP rails the reply accepts,
        // carried by the Answer (the owner enters them where the rails are
        // accepted once the Proof is right).
        std::vector<wire::RailToken> rail_tokens;
        // TCP rails: the connection and rail the frames name, whose token a
        // RailOpen must show.
        std::optional<std::pair<std::uint64_t, std::uint16_t>> rail;
    };
    // Given the socket and the frames (each one whole frame, checked by the
    // frame scanner); an error refuses the socket. Must act on nothing.
    using Answerer = std::function<Result<Reply>(int fd, const std::vector<std::span<const std::uint8_t>>& frames)>;

    struct Admitted {
        UniqueFd fd;
        // With authentication off the socket comes as accepted, nothing read
        // (answered false): the owner reads its frames itself.
        bool answered = false;
        std::any held;
    };

    // what: "control" or "tcp rail", for the log; frames: how many frames
    // follow a Greeting.
    static Result<std::unique_ptr<AuthGate>> create(std::shared_ptr<const JobKeyCell> keys, Duration timeout,
                                                    std::string what, std::size_t frames, Answerer answerer);
    ~AuthGate();
    AuthGate(const AuthGate&) = delete;
    AuthGate& operator=(const AuthGate&) = delete;

    // Readable (epoll) when a pending socket has input.
    int fd() const { return epoll_.get(); }
    // A socket just accepted: its Greeting is awaited.
    void admit(UniqueFd fd, TimePoint now);
    // Reads what pending sockets sent, answers complete openings; returns
    // the sockets proven; closes those that failed or ran out of time.
    // Never blocks.
    std::vector<Admitted> poll(TimePoint now);
    std::size_t pending() const { return pending_.size(); }
    // Tokens that RailOpens may show from now on, each once.
    void enter_rail_tokens(std::uint64_t connection_id, std::span<const wire::RailToken> tokens, TimePoint now) {
        tokens_.enter(connection_id, tokens, now);
    }

private:
    struct Pending;
    AuthGate(std::shared_ptr<const JobKeyCell> keys, Duration timeout, std::string what, std::size_t frames,
             Answerer answerer, UniqueFd epoll);
    // ok: proven; Busy: still waiting; else why it failed.
    Status advance(Pending& p, TimePoint now);
    // Advances p: false when it left (proven into ready_, or refused),
    // true while it waits, watched by the epoll.
    bool settle(Pending& p, TimePoint now);
    void watch(Pending& p, bool on);
    Status read_opening(Pending& p);
    bool opening_complete(std::span<const std::uint8_t> in) const;
    Status answer(Pending& p, const HmacKey& key);
    Status answer_rail_token(Pending& p, TimePoint now);
    Result<std::vector<std::span<const std::uint8_t>>> opening_frames(const Pending& p) const;
    void refuse(Pending& p, const Status& why);

    std::shared_ptr<const JobKeyCell> keys_;
    Duration timeout_;
    std::string what_;
    std::size_t frames_;
    Answerer answerer_;
    UniqueFd epoll_;
    std::vector<std::unique_ptr<Pending>> pending_;  // oldest first
    std::vector<Admitted> ready_;                    // authentication off: passed through
    RailTokenBook tokens_;
};

} // namespace tent::tcp
