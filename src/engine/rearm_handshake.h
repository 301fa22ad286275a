// The re-arm handshake of one rail, as a pure state machine: where a rail
// stands in the failover layer's care, and one transition function that
// says what to do on each event. No I/O, no clock of its own: the engine
// feeds it events (its own ticks, control frames from the peer, the
// outcomes of the actions it took) and carries out the actions it returns.
//
// Roles are fixed per connection, never per attempt: the connection's
// initiator leads every re-arm of every rail, the other side follows. (When
// both sides could ask, requests crossed; one side served the other's
// request while its own reply was judged stale, and a rail stayed out of
// use after its port came back.) The follower's wish for a re-arm is only
// a nudge, which the leader turns into a request of its own.
//
// One attempt, numbered by a nonce only the leader draws:
//   leader   -> Ask(n)      control Probe{n}: the follower fails its end if
//                           it was in use, lets its work flush, re-arms it
//   follower -> Ready(n)    control ProbeReply{n}: its end is re-armed
//   leader                  re-arms its own end (a verbs QP reset; a TCP
//                           rail dials a new socket), then posts a probe
//                           (a zero-length round trip on the rail)
//   leader   -> Proven(n)   control ProbeReply{n} once the probe came back:
//                           both ends use the rail again
//   follower -> Nudge(m)    control Probe{m}: "re-arm this rail"; m is the
//                           attempt it waits in (Ready, timed out), or 0
//                           when its end broke
// The leader re-arms second, so its probe always meets a re-armed end (a
// verbs probe reaching a QP not yet reset would wait for a retransmission).
// Frames are told apart by role: a leader receives Probe only as a Nudge
// and ProbeReply only as Ready; a follower Probe only as Ask, ProbeReply
// only as Proven.
//
// Why every order of messages ends with the rail in use on both sides:
//  - the follower follows the latest Ask whatever its state (the control
//    channel is ordered, so the latest is the leader's current attempt);
//  - the leader acts on Ready(n) only in Asking(n): a stale Ready is dropped,
//    and an attempt the leader gave up (timeout) is retried with a new
//    nonce, which the follower follows;
//  - the follower takes Proven(n) only in Ready(n): a Proven of an older
//    attempt, or one that arrives after its end broke again, is dropped, and
//    it nudges again;
//  - the follower never gives up on its own: waiting in Ready(n) it nudges
//    every timeout; the leader drops a nudge for the attempt it is running,
//    repeats Proven for the attempt it has proven (harmless if it was
//    taken), and otherwise fails its end and asks anew;
//  - a failure during an attempt (a port flapping again) ends the attempt
//    on the side that saw it; the follower nudges, and a leader already
//    re-arming or probing gives the attempt up on that nudge (its probe
//    fails anyway if the follower's end broke).
// Every wait is bounded by the timeout (failover_timeout_ms) or by the
// probe's own completion; the health layer (RailMonitor) decides when a
// broken rail may try again (not paused, or a probe due), so attempts back
// off as probes do.
#pragma once

#include <cstdint>

#include "common/clock.h"

namespace tent {

enum class RailCare {
    InUse,      // takes work
    Checking,   // intact but paused: a health probe is in flight (takes no new work)
    Broken,     // failed; waits until the health layer allows an attempt
    Asking,     // leader: Ask(attempt) sent, waiting for Ready(attempt)
    Rearming,   // leader: Ready came; re-arming its own end (may take turns: a TCP dial)
    Probing,    // leader: re-armed, the probe of the attempt is in flight
    Resetting,  // follower: Ask(attempt) came; flushing, then re-arming its end
    Ready,      // follower: re-armed, Ready(attempt) sent, waiting for Proven(attempt)
    Nudged,     // follower: broken, Nudge sent, waiting for an Ask
};

const char* rail_care_name(RailCare care);

enum class RearmRole { Leader, Follower };

struct RearmState {
    RailCare care = RailCare::InUse;
    // Leader: the nonce of the attempt under way, or of the last one proven.
    // Follower: the leader's nonce it serves (0: none).
    std::uint32_t attempt = 0;
    TimePoint since{};  // when care last changed (or the follower last nudged)
};

struct RearmEvent {
    enum class Kind {
        Failed,       // the rail failed (its own error, a port event, silence)
        Tick,         // periodic: allowed and idle say what may happen now
        HealthProbe,  // an intact, paused rail is due for a health probe
        PeerAsk,      // follower: the leader's Ask(nonce)
        PeerReady,    // leader: the follower's Ready(nonce)
        PeerProven,   // follower: the leader's Proven(nonce)
        PeerNudge,    // leader: the follower's Nudge(nonce)
        RearmDone,    // Rail::rearm() succeeded
        RearmBusy,    // Rail::rearm() is under way (operations outstanding, a dial)
        RearmFailed,  // Rail::rearm() failed
        ProbePassed,  // the probe posted for this rail came back answered
        ProbeFailed,  // ... or failed
    };
    Kind kind = Kind::Tick;
    std::uint32_t nonce = 0;  // Peer*: the frame's nonce
    bool allowed = false;     // Tick: the health layer allows an attempt now
    bool idle = false;        // Tick: nothing outstanding on the rail
};

// What the engine does after a transition, in this order.
struct RearmActions {
    // Fail the rail now (its work is flushed and replayed elsewhere); if it
    // is then broken while the next state is InUse, report Failed next.
    bool fail_rail = false;
    bool rearm = false;        // call Rail::rearm() and feed back RearmDone/Busy/Failed
    bool post_probe = false;   // post a probe; its completion is fed back
    bool send_ask = false;     // control Probe{nonce}
    bool send_ready = false;   // control ProbeReply{nonce}
    bool send_proven = false;  // control ProbeReply{nonce}
    bool send_nudge = false;   // control Probe{nonce}
    std::uint32_t nonce = 0;
    bool gave_up = false;      // an attempt ended without the rail back: the health layer counts a failed probe
    bool back_in_use = false;  // the rail carries traffic again
};

struct RearmStep {
    RearmState next;
    RearmActions actions;
};

// The transition function. `fresh_nonce` is used when the leader starts an
// attempt (non-zero, different from the attempts before); `timeout` bounds
// every wait for the peer.
RearmStep rearm_step(RearmRole role, const RearmState& state, const RearmEvent& event, TimePoint now,
                     Duration timeout, std::uint32_t fresh_nonce);

} // namespace tent
