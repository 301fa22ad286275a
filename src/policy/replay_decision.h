// Whether one failed piece of a request (a chunk of a WRITE/READ, a fragment
// of a SEND) goes to another rail or ends its request. Pure: the engine keeps
// a ReplayHistory per piece, so one rail dying with many pieces in flight
// spends each piece's budget once, never a shared one. Where a replayed
// piece goes is failover_route.h's business.
#pragma once

#include "common/status.h"

namespace tent {

inline constexpr const char* kFailoverExhaustedMessage = "Failover limit exceeded, all transports exhausted";

struct ReplayHistory {
    int failovers = 0;          // replays taken so far
    int remote_refusals = 0;    // failures with Code::RemoteAccess so far
};

enum class ReplayVerdict { Replay, Fail };

struct ReplayDecision {
    ReplayVerdict verdict = ReplayVerdict::Fail;
    Status status;  // Fail: what the request completes with
};

// failure: why the piece failed. max_attempts: the max_failover_attempts knob
// (0 = no failover). A caller error fails at once (another rail would refuse
// it too); a remote access refusal is replayed once, on another rail, since
// a key can be stale on one HCA only, and fails with its own status if a
// second rail refuses too. Beyond the budget the request fails with
// kFailoverExhaustedMessage and the last failure.
ReplayDecision decide_replay(const Status& failure, const ReplayHistory& history, int max_attempts);

// Records a replay that decide_replay() allowed.
void note_replay(const Status& failure, ReplayHistory& history);

} // namespace tent
