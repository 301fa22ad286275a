#include "engine/rearm_handshake.h"

namespace tent {

const char* rail_care_name(RailCare care) {
    switch (care) {
    case RailCare::InUse: return "in use";
    case RailCare::Checking: return "probing";
    case RailCare::Broken: return "failed";
    case RailCare::Asking: return "re-arming (waiting for the peer)";
    case RailCare::Rearming: return "re-arming";
    case RailCare::Probing: return "re-armed, probing";
    case RailCare::Resetting: return "re-arming (at the peer's request)";
    case RailCare::Ready: return "re-armed, waiting for the peer's probe";
    case RailCare::Nudged: return "failed, asked the peer to re-arm";
    }
    return "?";
}

namespace {

using Kind = RearmEvent::Kind;

RearmStep stay(const RearmState& s) { return {s, {}}; }

RearmStep go(RailCare care, std::uint32_t attempt, TimePoint now) { return {{care, attempt, now}, {}}; }

bool in_use(RailCare c) { return c == RailCare::InUse || c == RailCare::Checking; }

// A health probe of an intact rail failed: the rail is failed, and stays
// in use if failing leaves it intact (nothing to reset: the health layer's
// pause keeps work away); if it breaks, the engine reports Failed next.
RearmStep checked_and_failed(const RearmState& s, TimePoint now) {
    RearmStep r = go(RailCare::InUse, s.attempt, now);
    r.actions.fail_rail = true;
    return r;
}

// Either role: a rail in use is checked with a probe when the health layer
// asks; otherwise it is being re-armed and the probe waits.
RearmStep health_probe(const RearmState& s, TimePoint now) {
    if (s.care != RailCare::InUse) return stay(s);
    RearmStep r = go(RailCare::Checking, s.attempt, now);
    r.actions.post_probe = true;
    return r;
}

// Either role: the rail's outstanding work has drained, so the reset (this
// side's re-arm) can go ahead.
RearmStep rearm_now(const RearmState& s) {
    RearmStep r = stay(s);
    r.actions.rearm = true;
    return r;
}

RearmStep leader_step(const RearmState& s, const RearmEvent& e, TimePoint now, Duration timeout,
                      std::uint32_t fresh) {
    switch (e.kind) {
    case Kind::Failed:
        // A failure during an attempt ends it (the rail is failed already);
        // a probe in flight ends with its own completion.
        if (in_use(s.care) || s.care == RailCare::Asking || s.care == RailCare::Rearming)
            return go(RailCare::Broken, s.attempt, now);
        return stay(s);
    case Kind::Tick:
        if (s.care == RailCare::Broken && e.allowed && e.idle) {
            RearmStep r = go(RailCare::Asking, fresh, now);
            r.actions.send_ask = true;
            r.actions.nonce = fresh;
            return r;
        }
        if ((s.care == RailCare::Asking || s.care == RailCare::Rearming) && now - s.since >= timeout) {
            // The follower did not answer, or the dial did not finish: give
            // up this attempt (a dial is abandoned by failing the rail).
            RearmStep r = go(RailCare::Broken, s.attempt, now);
            r.actions.fail_rail = s.care == RailCare::Rearming;
            r.actions.gave_up = true;
            return r;
        }
        if (s.care == RailCare::Rearming && e.idle) return rearm_now(s);
        return stay(s);
    case Kind::HealthProbe: return health_probe(s, now);
    case Kind::PeerReady:
        if (s.care != RailCare::Asking || e.nonce != s.attempt) return stay(s);  // stale
        {
            RearmStep r = go(RailCare::Rearming, s.attempt, now);
            r.actions.rearm = true;
            return r;
        }
    case Kind::PeerNudge:
        // Past Ready(n), a nudge without an attempt means the follower's
        // re-armed end broke: this attempt cannot pass (its probe might
        // never be answered), so it is given up. (A nudge sent before the
        // follower saw Ask(n) arrives before Ready(n), while Asking.)
        if ((s.care == RailCare::Rearming || s.care == RailCare::Probing) && e.nonce == 0) {
            RearmStep r = go(RailCare::Broken, s.attempt, now);
            r.actions.fail_rail = true;
            r.actions.gave_up = true;
            return r;
        }
        // Otherwise only a rail this side uses can be news: in every other
        // state an attempt is under way or due, and the follower follows
        // its Ask. A nudge for the attempt just proven crossed its Proven.
        if (!in_use(s.care)) return stay(s);
        if (e.nonce != 0 && e.nonce == s.attempt) {
            // Proven again, harmless where it was taken: a follower that
            // missed it would otherwise wait for good.
            RearmStep r = stay(s);
            r.actions.send_proven = true;
            r.actions.nonce = s.attempt;
            return r;
        }
        {
            RearmStep r = go(RailCare::Broken, s.attempt, now);
            r.actions.fail_rail = true;
            return r;
        }
    case Kind::RearmDone:
        if (s.care != RailCare::Rearming) return stay(s);
        {
            RearmStep r = go(RailCare::Probing, s.attempt, now);
            r.actions.post_probe = true;
            return r;
        }
    case Kind::RearmBusy: return stay(s);
    case Kind::RearmFailed:
        if (s.care != RailCare::Rearming) return stay(s);
        {
            RearmStep r = go(RailCare::Broken, s.attempt, now);
            r.actions.gave_up = true;
            return r;
        }
    case Kind::ProbePassed:
        if (s.care == RailCare::Checking) return go(RailCare::InUse, s.attempt, now);
        if (s.care != RailCare::Probing) return stay(s);
        {
            RearmStep r = go(RailCare::InUse, s.attempt, now);
            r.actions.send_proven = true;
            r.actions.nonce = s.attempt;
            r.actions.back_in_use = true;
            return r;
        }
    case Kind::ProbeFailed:
        if (s.care == RailCare::Checking) return checked_and_failed(s, now);
        if (s.care != RailCare::Probing) return stay(s);
        {
            RearmStep r = go(RailCare::Broken, s.attempt, now);
            r.actions.fail_rail = true;  // the probe may have failed on an intact rail (timeout)
            return r;
        }
    case Kind::PeerAsk:
    case Kind::PeerProven: return stay(s);  // a follower's frames; never sent to a leader
    }
    return stay(s);
}

RearmStep follower_step(const RearmState& s, const RearmEvent& e, TimePoint now, Duration timeout) {
    switch (e.kind) {
    case Kind::Failed:
        // A re-armed end that fails before it is proven: the leader's probe
        // fails or is answered before the failure; either way nudge.
        if (in_use(s.care) || s.care == RailCare::Ready) return go(RailCare::Broken, 0, now);
        return stay(s);
    case Kind::Tick:
        if (s.care == RailCare::Broken && e.allowed && e.idle) {
            RearmStep r = go(RailCare::Nudged, 0, now);
            r.actions.send_nudge = true;
            r.actions.nonce = 0;
            return r;
        }
        if (s.care == RailCare::Nudged && now - s.since >= timeout) {
            RearmStep r = go(RailCare::Broken, 0, now);
            r.actions.gave_up = true;
            return r;
        }
        if (s.care == RailCare::Ready && now - s.since >= timeout) {
            // Still waiting for Proven: remind the leader (it drops the
            // nudge if the attempt is under way or proven).
            RearmStep r = go(RailCare::Ready, s.attempt, now);
            r.actions.send_nudge = true;
            r.actions.nonce = s.attempt;
            return r;
        }
        if (s.care == RailCare::Resetting && e.idle) return rearm_now(s);
        return stay(s);
    case Kind::HealthProbe: return health_probe(s, now);
    case Kind::PeerAsk: {
        // The latest Ask wins, whatever this side was doing.
        RearmStep r = go(RailCare::Resetting, e.nonce, now);
        r.actions.fail_rail = in_use(s.care);
        r.actions.rearm = true;  // Busy until its work has flushed; ticks retry
        return r;
    }
    case Kind::PeerProven:
        if (s.care != RailCare::Ready || e.nonce != s.attempt) return stay(s);  // stale, or broke since
        {
            RearmStep r = go(RailCare::InUse, s.attempt, now);
            r.actions.back_in_use = true;
            return r;
        }
    case Kind::RearmDone:
        if (s.care != RailCare::Resetting) return stay(s);
        {
            RearmStep r = go(RailCare::Ready, s.attempt, now);
            r.actions.send_ready = true;
            r.actions.nonce = s.attempt;
            return r;
        }
    case Kind::RearmBusy: return stay(s);
    case Kind::RearmFailed:
        if (s.care != RailCare::Resetting) return stay(s);
        return go(RailCare::Broken, 0, now);
    case Kind::ProbePassed:
        if (s.care == RailCare::Checking) return go(RailCare::InUse, s.attempt, now);
        return stay(s);
    case Kind::ProbeFailed:
        if (s.care != RailCare::Checking) return stay(s);
        return checked_and_failed(s, now);
    case Kind::PeerReady:
    case Kind::PeerNudge: return stay(s);  // a leader's frames; never sent to a follower
    }
    return stay(s);
}

} // namespace

RearmStep rearm_step(RearmRole role, const RearmState& state, const RearmEvent& event, TimePoint now,
                     Duration timeout, std::uint32_t fresh_nonce) {
    return role == RearmRole::Leader ? leader_step(state, event, now, timeout, fresh_nonce)
                                     : follower_step(state, event, now, timeout);
}

} // namespace tent
