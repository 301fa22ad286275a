// A Rail: one established path to one peer (an RC QP between a local and a
// remote HCA port, or one TCP connection between two addresses) on which the
// engine posts chunk-sized operations. The engine owns striping, sequence
// numbers, replay and failover; a rail only moves bytes and reports, per
// operation, exactly one completion with an outcome the health layer
// understands (src/health/rail_outcome.h).
//
// Threading: a rail is driven by one thread at a time (the engine's progress
// thread); post() and progress() are never called concurrently on one rail.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "health/rail_outcome.h"
#include "common/transport_kind.h"

namespace tent {

// Why a piece failed whose local buffer the program deregistered while the
// request was in flight: a caller's error, never a rail's (the engine and a
// TCP rail both refuse to touch such memory).
inline constexpr const char* kLocalBufferDeregistered = "local buffer deregistered while the request was in flight";

enum class RailOpcode : std::uint8_t {
    Write,  // one-sided: local -> remote_addr
    Read,   // one-sided: remote_addr -> local
    Send,   // two-sided: local bytes delivered to the peer's receive handler
    Probe,  // a zero-length round trip proving the path works (health probes)
    // 8-byte atomics at remote_addr (8-byte aligned); the value found there
    // before is written to local (8 bytes, registered like any local buffer).
    AtomicFetchAdd,  // *remote += compare_add
    AtomicCmpSwap,   // if (*remote == compare_add) *remote = swap
};

inline bool is_atomic(RailOpcode op) { return op == RailOpcode::AtomicFetchAdd || op == RailOpcode::AtomicCmpSwap; }

struct RailOp {
    std::uint64_t cookie = 0;  // the engine's id for this op, echoed in its completion
    RailOpcode opcode = RailOpcode::Write;
    void* local = nullptr;     // local buffer (inside an engine registration)
    std::uint64_t length = 0;
    // verbs: lkey of the registration on this rail's local device; tcp: the
    // registration's TCP key, looked up again before a read's data or an
    // atomic's result is placed (0: not checked)
    std::uint32_t lkey = 0;
    std::uint64_t remote_addr = 0;
    // Write/Read: the key the target checks -- the verbs rkey on the remote
    // device of this rail, or the registration's TCP key on a TCP rail.
    std::uint32_t rkey = 0;
    // Send: the connection-level header the receiver needs (sequence number,
    // fragment offset/total), carried opaquely in front of the payload.
    std::span<const std::uint8_t> send_header;
    // Atomics: the operands, and the engine's id of the operation on its
    // connection (a TCP target executes each id once, see AtomicLedger).
    std::uint64_t compare_add = 0;
    std::uint64_t swap = 0;
    std::uint64_t atomic_id = 0;
};

struct RailCompletion {
    std::uint64_t cookie = 0;
    RailOutcome outcome = RailOutcome::Success;
    Status status;             // ok, or what went wrong (for logs and the caller)
    Duration latency{};        // post to completion, for the health layer's slow-rail check
};

// A two-sided message that arrived on a rail: header and payload as the
// sender posted them. Valid only during the callback.
struct RailMessage {
    std::span<const std::uint8_t> header;
    std::span<const std::uint8_t> payload;
};

class Rail {
public:
    virtual ~Rail() = default;

    virtual TransportKind kind() const = 0;
    // For logs and statistics, e.g. "mlx5_0:1->mlx5_1:1" or "tcp 127.0.0.1->127.0.0.2:7000".
    virtual const std::string& name() const = 0;
    // Largest length one op may carry; the engine chunks above it.
    virtual std::uint64_t max_op_length() const = 0;
    // Largest send_header + payload of one Send (a receive buffer on verbs);
    // the engine fragments messages below it.
    virtual std::uint64_t max_send_length() const { return max_op_length(); }
    // Largest read the engine plans as one piece (a preference, not a limit:
    // a piece moved here by failover may be longer, up to max_op_length()).
    virtual std::uint64_t max_read_length() const { return max_op_length(); }

    // Start one operation. An error is a submit-stage failure: no completion follows.
    virtual Status post(const RailOp& op) = 0;
    // Between these two, post() may hold what it would send until
    // end_posts() (TCP: the pieces of one request leave in one sendmsg
    // instead of one each). Every begin_posts() is followed by end_posts().
    virtual void begin_posts() {}
    virtual void end_posts() {}

    // Make progress without blocking: append finished operations to `done` and
    // hand every arrived two-sided message to `on_message`.
    virtual void progress(std::vector<RailCompletion>& done,
                          const std::function<void(const RailMessage&)>& on_message) = 0;

    // A file descriptor that becomes readable when progress() has work
    // (completion channel, socket); -1 if the rail must be polled.
    virtual int wait_fd() const = 0;
    // The caller is about to sleep on wait_fd(): make it report work that
    // arrives from now on (verbs: arm the completion queue, which costs
    // system calls, so it is not done on every progress()). Then call
    // progress() once more before sleeping: work that arrived before this
    // call need not make wait_fd() readable.
    virtual void prepare_to_wait() {}
    // Outgoing bytes are queued: the caller also waits for wait_fd() to
    // become writable.
    virtual bool wants_write() const { return false; }
    // An answer for the peer (an acknowledgement) waits here for the next
    // frame this rail sends: an op posted now carries it in the same
    // system call and segment.
    virtual bool holds_answer() const { return false; }
    // Sends what waits here for the peer (a held acknowledgement too) as far
    // as the transport takes it now, without waiting: the engine does so
    // before it tells its peers goodbye.
    virtual void send_queued() {}
    // progress() would do nothing at `now` unless wait_fd() is readable (no
    // bytes queued, completions waiting or timers due): a driver may look
    // at many such rails with one poll() instead of progressing each.
    virtual bool idle_unless_readable(TimePoint /*now*/) const { return false; }
    // progress() stopped with input already read and not yet handled (a
    // turn's share of the work is bounded): its descriptor will not say so,
    // so the driver must come back before it sleeps.
    virtual bool input_waiting() const { return false; }
    // Since bytes last arrived from the peer (zero: the rail does not know).
    virtual Duration silent_for(TimePoint /*now*/) const { return Duration::zero(); }
    // When progress() must run even without descriptor activity (heartbeat,
    // silence limit); TimePoint::max() when never.
    virtual TimePoint next_timer() const { return TimePoint::max(); }

    // Failover hooks (the engine's failover layer drives them).
    //
    // The rail can carry no operation until rearm() (a QP in the error
    // state, a closed socket). Its outstanding operations still complete,
    // with errors, through progress().
    virtual bool broken() const { return false; }
    // Declare the rail failed now (a port event, silence): every
    // outstanding operation completes at the next progress(), flushed, and
    // posts are refused until rearm().
    virtual Status fail() { return Status::ok(); }
    // Bring a broken rail back once nothing is outstanding; the peer's end
    // must be re-armed too (the engine agrees on it over the control
    // channel). Unsupported when the rail cannot come back (then it stays
    // broken); Busy while operations are still outstanding.
    virtual Status rearm() { return Status(Code::Unsupported, name() + " cannot be re-armed"); }
    // rearm() can bring this rail back (the engine re-arms only such rails).
    virtual bool rearmable() const { return false; }
    // The path loses packets that the transport repairs (TCP retransmits):
    // the rail works but should be used last.
    virtual bool lossy() const { return false; }
    // The target's engine executes this rail's atomics once per id and
    // answers a repeated id with the first result (TCP): an atomic whose
    // answer was lost may be sent again on such a rail. False when the
    // remote HCA executes them and keeps nothing (policy/atomic_replay.h).
    virtual bool atomics_deduplicated() const { return false; }
};

// begin_posts() on a rail for the guard's life, end_posts() at its end
// (whatever way the scope is left).
class PostsTogether {
public:
    explicit PostsTogether(Rail& rail) : rail_(rail) { rail_.begin_posts(); }
    ~PostsTogether() { rail_.end_posts(); }
    PostsTogether(const PostsTogether&) = delete;
    PostsTogether& operator=(const PostsTogether&) = delete;

private:
    Rail& rail_;
};

} // namespace tent
