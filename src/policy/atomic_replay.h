// Whether a failed 8-byte atomic (fetch-and-add, compare-and-swap) may be
// sent again, and where. An atomic is not idempotent: executed twice it
// adds twice, so it is never replayed blindly. Pure: the engine keeps an
// AtomicTrail per atomic and asks after each failure.
//
// Where an atomic runs decides what a failure leaves unknown:
//  - Hardware: the remote HCA executes it (verbs rails) and remembers
//    nothing an engine could ask. Once it left the host, a failure leaves
//    open whether it executed: it is not replayed, the request fails.
//  - Ledger: the target's engine executes it (TCP rails) once per
//    operation id and answers a repeat of that id from its ledger with the
//    first result. Once it left on such a path it may be sent again, with
//    the same id, but only on such paths: the target returns the result of
//    its single execution.
// A failure before the atomic left the host (a refused post), or a refusal
// by the target (remote access: it did not execute), leaves it where it was.
#pragma once

#include "common/status.h"
#include "policy/replay_decision.h"

namespace tent {

enum class AtomicPath { Hardware, Ledger };

// What is known of one atomic's attempts so far.
struct AtomicTrail {
    bool on_ledger = false;  // it left on a ledger path once: it may have executed there
};

enum class AtomicVerdict {
    AnyRail,     // replay on any rail
    LedgerOnly,  // replay, with the same id, on ledger paths only
    Fail,        // the request fails with the decision's status
};

struct AtomicReplayDecision {
    AtomicVerdict verdict = AtomicVerdict::Fail;
    Status status;  // Fail: what the request completes with
};

inline constexpr const char* kAtomicUnknownMessage = "atomic not replayed: it may have executed";

// An atomic that may have executed fails with Code::TransportError (a rail
// error to the caller) and kAtomicUnknownMessage.
// failure: why this attempt failed; left_host: the attempt had been posted
// (a completion reported the failure, not the post); path: where this
// attempt went. The replay budget and caller errors are decide_replay()'s.
AtomicReplayDecision decide_atomic_replay(const Status& failure, bool left_host, AtomicPath path,
                                          const AtomicTrail& trail, const ReplayHistory& history, int max_attempts);

// Records an attempt that left the host on path.
void note_atomic_sent(AtomicPath path, AtomicTrail& trail);

} // namespace tent
