// The job-key handshake (wire/auth_handshake.h) on sockets: both halves of
// it for every control connection and TCP rail socket, before any frame.
//
// Connecting side (blocking up to a deadline, like the connect paths that
// call it): AuthProver::prove() reads the Challenge and sends the Proof; the
// caller may send its first frame at once, then confirm() reads and checks
// the Confirm before the caller reads the peer's first frame.
//
// Accepting side (never blocking: strangers must not stall the progress
// thread): AuthGate holds freshly accepted sockets until they have proved
// themselves, each for at most the connect timeout and at most kMaxPending
// at once, and hands over only proven ones. A socket that fails is closed
// and logged (rate-limited); it costs the job nothing else.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/job_key_cell.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "wire/auth_handshake.h"

namespace tent::tcp {

class AuthProver {
public:
    // With authentication off (keys.required() false) both steps do nothing.
    static Result<AuthProver> prove(int fd, const JobKeyCell& keys, TimePoint deadline);
    Status confirm(int fd, TimePoint deadline);

    // The same in steps for a caller that must not block while messages
    // travel: start() needs nothing from the socket; answer_challenge() and
    // confirm() once the socket is readable.
    static Result<AuthProver> start(const JobKeyCell& keys);
    Status answer_challenge(int fd, TimePoint deadline);
    bool required() const { return key_.has_value(); }

private:
    AuthProver(std::optional<JobKey> key, const wire::Nonce& nonce) : key_(std::move(key)), auth_(nonce) {}
    std::optional<JobKey> key_;  // nullopt: authentication off
    wire::AuthInitiator auth_;
};

class AuthGate {
public:
    static constexpr std::size_t kMaxPending = 64;

    // what: "control" or "tcp rail", for the log.
    static Result<std::unique_ptr<AuthGate>> create(std::shared_ptr<const JobKeyCell> keys, Duration timeout,
                                                    std::string what);
    ~AuthGate();
    AuthGate(const AuthGate&) = delete;
    AuthGate& operator=(const AuthGate&) = delete;

    // Readable (epoll) when a pending socket has input.
    int fd() const { return epoll_.get(); }
    // A socket just accepted: the Challenge goes out, the Proof is awaited.
    void admit(UniqueFd fd, TimePoint now);
    // Reads what pending sockets sent; returns those proven (Confirm sent),
    // closes those that failed or ran out of time. Never blocks.
    std::vector<UniqueFd> poll(TimePoint now);
    std::size_t pending() const { return pending_.size(); }

private:
    struct Pending;
    AuthGate(std::shared_ptr<const JobKeyCell> keys, Duration timeout, std::string what, UniqueFd epoll);
    // ok: proven; Busy: still waiting; else why it failed.
    Status advance(Pending& p, TimePoint now);
    void refuse(Pending& p, const Status& why);

    std::shared_ptr<const JobKeyCell> keys_;
    Duration timeout_;
    std::string what_;
    UniqueFd epoll_;
    std::vector<std::unique_ptr<Pending>> pending_;  // oldest first
    std::vector<UniqueFd> ready_;                    // authentication off: passed through
};

} // namespace tent::tcp
