// Whether one failed piece of a request (a chunk of a WRITE/READ, a fragment
// of a SEND) goes to another rail or ends its request. Pure: the engine keeps
// a ReplayHistory per piece, so one rail dying with many pieces in flight
// spends each piece's budget once, never a shared one. Where a replayed
// piece goes is failover_route.h's business.
#pragma once

#include "common/status.h"

namespace tent {

inline constexpr const char* kFailoverExhaustedMessage = "Failover limit exceeded, all transports exhausted";

// Whose failure a piece's was: its own work request's, or another's. An RC
// queue pair that fails completes the failing work request with the error
// and flushes every one behind it (IBV_WC_WR_FLUSH_ERR), and a rail may fail
// between a piece's placement and its post: those pieces did nothing wrong.
enum class FailureKind { Own, Collateral };

// Collateral replays spend none of max_failover_attempts (with rails that
// stay in use under 1% errors, the flushes behind each error spent a
// piece's 3 attempts in 3 of 40 runs of 100,000 sends); this bound
// only keeps a piece from being moved without end.
inline constexpr int kMaxCollateralReplays = 64;

struct ReplayHistory {
    int failovers = 0;          // replays after failures of its own so far
    int collateral = 0;         // replays after collateral failures so far
    int remote_refusals = 0;    // failures with Code::RemoteAccess so far
};

enum class ReplayVerdict { Replay, Fail };

struct ReplayDecision {
    ReplayVerdict verdict = ReplayVerdict::Fail;
    Status status;  // Fail: what the request completes with
};

// failure: why the piece failed, and kind: whose failure it was.
// max_attempts: the max_failover_attempts knob (0 = no failover). A caller
// error fails at once (another rail would refuse it too); a remote access
// refusal is replayed once, on another rail, since a key can be stale on one
// HCA only, and fails with its own status if a second rail refuses too.
// Beyond the budget (kMaxCollateralReplays for collateral failures) the
// request fails with kFailoverExhaustedMessage and the last failure.
ReplayDecision decide_replay(const Status& failure, FailureKind kind, const ReplayHistory& history,
                             int max_attempts);

// Records a replay that decide_replay() allowed.
void note_replay(const Status& failure, FailureKind kind, ReplayHistory& history);

} // namespace tent
