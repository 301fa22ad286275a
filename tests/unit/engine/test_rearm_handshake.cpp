// The re-arm handshake (src/engine/rearm_handshake.h) between a leader and
// a follower whose control frames the test delivers in the order it
// chooses: both sides starting at once in every order, a lost Ask, Ready
// or Proven, stale replies, the port flapping again mid-handshake, and
// thousands of seeded random schedules. Whatever the order, both ends end
// with the rail re-armed and in use. No threads, no sleeps: time is a
// number the test advances.
#include <criterion/criterion.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/rearm_handshake.h"

using namespace tent;
using Kind = RearmEvent::Kind;

namespace {

constexpr Duration kTimeout = std::chrono::milliseconds(2000);

struct Msg {
    bool reply = false;  // ProbeReply, else Probe
    std::uint32_t nonce = 0;
};

// One end of the rail: its care state, its rail (broken or not) and the
// frames in flight towards it.
struct End {
    RearmRole role;
    RearmState st;
    bool broken = false;
    bool probe_in_flight = false;
    std::deque<Msg> inbox;
    // When this end was last re-armed (a verbs QP reset and connected
    // again): the path works only if the leader's end was re-armed after
    // the follower's (each reset of one end needs one of the other after it).
    std::uint64_t rearmed_at = 0;
};

struct Sim {
    End leader{RearmRole::Leader, {}, false, false, {}, 2};
    End follower{RearmRole::Follower, {}, false, false, {}, 1};
    std::uint64_t rearms = 2;
    TimePoint now{};
    std::uint32_t next_nonce = 1;
    bool drop_next_to_follower = false;
    bool drop_next_to_leader = false;
    std::string trace;

    End& peer_of(End& e) { return &e == &leader ? follower : leader; }

    void send(End& from, Msg m) {
        End& to = peer_of(from);
        bool& drop = &to == &follower ? drop_next_to_follower : drop_next_to_leader;
        if (drop) {
            drop = false;
            trace += " (lost)";
            return;
        }
        to.inbox.push_back(m);
    }

    void event(End& e, RearmEvent ev) {
        const std::uint32_t fresh = next_nonce;
        RearmStep step = rearm_step(e.role, e.st, ev, now, kTimeout, fresh);
        if (step.next.attempt == fresh && e.role == RearmRole::Leader && step.actions.send_ask) ++next_nonce;
        trace += std::string(" ") + (e.role == RearmRole::Leader ? "L:" : "F:") + rail_care_name(step.next.care);
        e.st = step.next;
        const RearmActions& a = step.actions;
        if (a.fail_rail) {
            e.broken = true;
            e.probe_in_flight = false;  // flushed: completes failed below
            if (a.post_probe) cr_assert_fail("fail and probe at once");
        }
        if (a.fail_rail && e.st.care == RailCare::InUse) event(e, {Kind::Failed});  // as the engine does
        if (a.send_ask || a.send_nudge) send(e, {false, a.nonce});
        if (a.send_ready || a.send_proven) send(e, {true, a.nonce});
        if (a.rearm) {
            e.broken = false;
            e.rearmed_at = ++rearms;
            event(e, {Kind::RearmDone});
            return;
        }
        if (a.post_probe) {
            if (e.broken) {
                event(e, {Kind::ProbeFailed});
                return;
            }
            e.probe_in_flight = true;
        }
    }

    // A rail fails on one side (a port going down); the engine fails the
    // rail object first, then tells the machine.
    void fail(End& e) {
        const bool had_probe = e.probe_in_flight;
        e.broken = true;
        e.probe_in_flight = false;
        event(e, {Kind::Failed});
        if (had_probe) event(e, {Kind::ProbeFailed});
    }

    void tick(End& e, bool allowed = true) {
        RearmEvent ev{Kind::Tick};
        ev.allowed = allowed;
        ev.idle = !e.probe_in_flight;
        event(e, ev);
    }

    bool deliver(End& e) {
        if (e.inbox.empty()) return false;
        Msg m = e.inbox.front();
        e.inbox.pop_front();
        RearmEvent ev;
        ev.nonce = m.nonce;
        if (e.role == RearmRole::Leader)
            ev.kind = m.reply ? Kind::PeerReady : Kind::PeerNudge;
        else
            ev.kind = m.reply ? Kind::PeerProven : Kind::PeerAsk;
        event(e, ev);
        return true;
    }

    // Neither end is broken (a verbs QP in error, a closed socket) and
    // the two ends were re-armed in the order that pairs them.
    bool path_works() const { return !leader.broken && !follower.broken && leader.rearmed_at > follower.rearmed_at; }

    // The leader's probe crosses the rail: it passes when the path works.
    bool complete_probe() {
        if (!leader.probe_in_flight) return false;
        leader.probe_in_flight = false;
        event(leader, {path_works() ? Kind::ProbePassed : Kind::ProbeFailed});
        return true;
    }

    bool both_in_use() const {
        return leader.st.care == RailCare::InUse && follower.st.care == RailCare::InUse && path_works();
    }

    // Runs the two sides with every frame delivered, probes completed and
    // time advancing by a tenth of the timeout per round, until both use the
    // rail (bounded).
    bool settle(int rounds = 200) {
        for (int i = 0; i < rounds; ++i) {
            bool moved = deliver(leader) | deliver(follower) | complete_probe();
            if (moved) continue;
            if (both_in_use()) break;
            now += kTimeout / 10;
            tick(leader);
            tick(follower);
        }
        return both_in_use() && leader.inbox.empty() && follower.inbox.empty();
    }

    void break_both() {
        fail(leader);
        fail(follower);
    }

    // Everything that decides what happens next (not the trace): two
    // schedules that reach the same key behave the same from there on.
    // Time matters only as "has this side waited a timeout".
    std::string key() const {
        std::string k;
        for (const End* e : {&leader, &follower}) {
            k += std::to_string(static_cast<int>(e->st.care)) + "/" + std::to_string(e->st.attempt) + "/" +
                 (now - e->st.since >= kTimeout ? "t" : "-") + (e->broken ? "b" : "-") +
                 (e->probe_in_flight ? "p" : "-") + "[";
            for (const Msg& m : e->inbox) k += (m.reply ? "R" : "P") + std::to_string(m.nonce) + ",";
            k += "]";
        }
        return k + (leader.rearmed_at > follower.rearmed_at ? "paired" : "unpaired") + std::to_string(next_nonce);
    }

    // Once in use on both sides the rail stays in use: more time, ticks
    // and deliveries start no needless re-arm.
    bool stays_in_use() {
        for (int i = 0; i < 5; ++i) {
            now += kTimeout;
            tick(leader);
            tick(follower);
            while (deliver(leader) | deliver(follower) | complete_probe()) {
            }
        }
        return both_in_use();
    }
};

// Every schedule of the handshake from `start`: at each point any one of
// the enabled moves happens next (a frame delivered to either side, the
// probe completing, either side ticking, a timeout passing: at most
// `timeouts` times, a port failing again on either side: at most `faults`
// times). From every state reached the rail must come back into use on
// both sides once the schedule stops choosing, and stay there. Returns the
// number of distinct states checked.
std::size_t explore_every_order(const Sim& start, int timeouts, int faults) {
    struct Node {
        Sim sim;
        int timeouts, faults;
    };
    std::set<std::string> seen;
    std::vector<Node> todo{{start, timeouts, faults}};
    while (!todo.empty()) {
        Node n = std::move(todo.back());
        todo.pop_back();
        if (!seen.insert(n.sim.key() + "|" + std::to_string(n.timeouts) + "|" + std::to_string(n.faults)).second)
            continue;
        Sim settled = n.sim;
        cr_assert(settled.settle(400), "the rail did not come back: %s", settled.trace.c_str());
        cr_assert(settled.stays_in_use(), "the rail left use again: %s", settled.trace.c_str());
        cr_assert_lt(seen.size(), 2000000u, "the state space is not finite: %s", n.sim.trace.c_str());
        auto next = [&](const std::function<void(Sim&)>& move, int t, int f) {
            Node m{n.sim, t, f};
            move(m.sim);
            todo.push_back(std::move(m));
        };
        if (!n.sim.leader.inbox.empty()) next([](Sim& s) { s.deliver(s.leader); }, n.timeouts, n.faults);
        if (!n.sim.follower.inbox.empty()) next([](Sim& s) { s.deliver(s.follower); }, n.timeouts, n.faults);
        if (n.sim.leader.probe_in_flight) next([](Sim& s) { s.complete_probe(); }, n.timeouts, n.faults);
        next([](Sim& s) { s.tick(s.leader); }, n.timeouts, n.faults);
        next([](Sim& s) { s.tick(s.follower); }, n.timeouts, n.faults);
        if (n.timeouts > 0) next([](Sim& s) { s.now += kTimeout; }, n.timeouts - 1, n.faults);
        if (n.faults > 0) {
            next([](Sim& s) { s.fail(s.leader); }, n.timeouts, n.faults - 1);
            next([](Sim& s) { s.fail(s.follower); }, n.timeouts, n.faults - 1);
        }
    }
    return seen.size();
}

} // namespace

Test(rearm_handshake, one_side_asks_and_the_rail_returns) {
    Sim s;
    s.break_both();
    s.tick(s.leader);
    cr_assert_eq(s.leader.st.care, RailCare::Asking);
    s.deliver(s.follower);
    cr_assert_eq(s.follower.st.care, RailCare::Ready, "%s", s.trace.c_str());
    s.deliver(s.leader);
    cr_assert_eq(s.leader.st.care, RailCare::Probing);
    cr_assert(s.complete_probe());
    cr_assert_eq(s.leader.st.care, RailCare::InUse);
    s.deliver(s.follower);
    cr_assert(s.both_in_use(), "%s", s.trace.c_str());
}

Test(rearm_handshake, both_sides_start_at_once_in_every_order) {
    // The leader asks and the follower nudges in the same instant; the two
    // frames cross. Every order of the first deliveries.
    for (int order = 0; order < 4; ++order) {
        Sim s;
        s.break_both();
        if (order & 1) {
            s.tick(s.follower);
            s.tick(s.leader);
        } else {
            s.tick(s.leader);
            s.tick(s.follower);
        }
        if (order & 2) {
            s.deliver(s.leader);
            s.deliver(s.follower);
        } else {
            s.deliver(s.follower);
            s.deliver(s.leader);
        }
        cr_assert(s.settle(), "order %d: %s", order, s.trace.c_str());
    }
}

// Both sides start a re-arm at once, and then every order of every frame,
// probe, tick and timeout (two timeouts), with the port failing once more
// anywhere on the way: the rail is back in use on both sides every time.
Test(rearm_handshake, every_order_of_a_crossing_start_ends_in_use) {
    for (int who = 0; who < 3; ++who) {  // both ends broken; only the leader's; only the follower's
        Sim s;
        if (who != 2) s.fail(s.leader);
        if (who != 1) s.fail(s.follower);
        const std::size_t states = explore_every_order(s, 2, 1);
        cr_log_info("start %d: %zu states", who, states);
        cr_expect_gt(states, 100u, "the exploration went nowhere");
    }
}

Test(rearm_handshake, the_follower_nudges_first_and_the_leader_asks) {
    Sim s;
    s.fail(s.follower);  // only the follower's end saw the failure
    s.tick(s.follower);
    cr_assert_eq(s.follower.st.care, RailCare::Nudged);
    s.deliver(s.leader);  // the leader was using the rail: it fails its end
    cr_assert(s.leader.broken);
    cr_assert_eq(s.leader.st.care, RailCare::Broken);
    cr_assert(s.settle(), "%s", s.trace.c_str());
}

Test(rearm_handshake, a_lost_ask_is_asked_again) {
    Sim s;
    s.break_both();
    s.drop_next_to_follower = true;
    s.tick(s.leader);
    cr_assert(s.settle(), "%s", s.trace.c_str());
}

Test(rearm_handshake, a_lost_ready_is_asked_again) {
    Sim s;
    s.break_both();
    s.tick(s.leader);
    s.drop_next_to_leader = true;
    s.deliver(s.follower);
    cr_assert_eq(s.follower.st.care, RailCare::Ready);
    cr_assert(s.settle(), "%s", s.trace.c_str());
}

Test(rearm_handshake, a_lost_proven_is_repeated_on_the_next_nudge) {
    Sim s;
    s.break_both();
    s.tick(s.leader);
    s.deliver(s.follower);
    s.deliver(s.leader);
    s.drop_next_to_follower = true;
    s.complete_probe();
    cr_assert_eq(s.leader.st.care, RailCare::InUse);
    cr_assert_eq(s.follower.st.care, RailCare::Ready);
    cr_assert(s.settle(), "%s", s.trace.c_str());
    cr_expect(!s.leader.broken, "the leader's end was not failed again");
}

Test(rearm_handshake, a_stale_ready_is_dropped) {
    Sim s;
    s.break_both();
    s.tick(s.leader);  // Ask(1)
    s.now += kTimeout;
    s.tick(s.leader);  // gives up attempt 1
    cr_assert_eq(s.leader.st.care, RailCare::Broken);
    s.tick(s.leader);  // Ask(2)
    cr_assert_eq(s.leader.st.attempt, 2u);
    s.deliver(s.follower);  // Ask(1) -> Ready(1)
    s.deliver(s.leader);    // Ready(1): stale
    cr_assert_eq(s.leader.st.care, RailCare::Asking, "%s", s.trace.c_str());
    cr_assert(s.settle(), "%s", s.trace.c_str());
    cr_expect_eq(s.leader.st.attempt, 2u);
}

Test(rearm_handshake, a_stale_proven_is_dropped) {
    RearmState ready{RailCare::Ready, 7, TimePoint{}};
    RearmEvent proven{Kind::PeerProven, 6};
    RearmStep r = rearm_step(RearmRole::Follower, ready, proven, TimePoint{}, kTimeout, 0);
    cr_expect_eq(r.next.care, RailCare::Ready);
    cr_expect_not(r.actions.back_in_use);
    proven.nonce = 7;
    r = rearm_step(RearmRole::Follower, ready, proven, TimePoint{}, kTimeout, 0);
    cr_expect_eq(r.next.care, RailCare::InUse);
    cr_expect(r.actions.back_in_use);
}

Test(rearm_handshake, the_follower_port_flaps_after_ready) {
    Sim s;
    s.break_both();
    s.tick(s.leader);
    s.deliver(s.follower);  // Ready(1) sent
    s.fail(s.follower);     // ... and its port goes down again
    cr_assert_eq(s.follower.st.care, RailCare::Broken);
    s.deliver(s.leader);    // the leader re-arms and probes: the probe fails
    s.complete_probe();
    cr_assert_eq(s.leader.st.care, RailCare::Broken, "%s", s.trace.c_str());
    cr_assert(s.settle(), "%s", s.trace.c_str());
}

Test(rearm_handshake, the_follower_end_breaks_while_the_leader_probes) {
    Sim s;
    s.break_both();
    s.tick(s.leader);
    s.deliver(s.follower);
    s.deliver(s.leader);
    cr_assert_eq(s.leader.st.care, RailCare::Probing);
    s.fail(s.follower);     // before the probe crossed
    s.tick(s.follower);     // Nudge(0)
    s.deliver(s.leader);    // the leader gives the attempt up at once
    cr_assert_eq(s.leader.st.care, RailCare::Broken, "%s", s.trace.c_str());
    cr_assert(s.settle(), "%s", s.trace.c_str());
}

Test(rearm_handshake, the_follower_port_flaps_after_the_probe_passed) {
    Sim s;
    s.break_both();
    s.tick(s.leader);
    s.deliver(s.follower);
    s.deliver(s.leader);
    s.complete_probe();     // Proven(1) on its way
    s.fail(s.follower);     // the follower's end fails before it arrives
    s.deliver(s.follower);  // Proven(1): dropped, the end is broken
    cr_assert_eq(s.follower.st.care, RailCare::Broken);
    cr_assert(s.settle(), "%s", s.trace.c_str());
}

Test(rearm_handshake, the_leader_port_flaps_while_asking) {
    Sim s;
    s.break_both();
    s.tick(s.leader);
    s.fail(s.leader);  // its port goes down again: the attempt ends
    cr_assert_eq(s.leader.st.care, RailCare::Broken);
    s.deliver(s.follower);
    s.deliver(s.leader);  // Ready(1): stale now
    cr_assert_eq(s.leader.st.care, RailCare::Broken, "%s", s.trace.c_str());
    cr_assert(s.settle(), "%s", s.trace.c_str());
}

Test(rearm_handshake, the_leader_port_flaps_while_probing) {
    Sim s;
    s.break_both();
    s.tick(s.leader);
    s.deliver(s.follower);
    s.deliver(s.leader);
    cr_assert_eq(s.leader.st.care, RailCare::Probing);
    s.fail(s.leader);  // the probe is flushed
    cr_assert_eq(s.leader.st.care, RailCare::Broken, "%s", s.trace.c_str());
    cr_assert(s.settle(), "%s", s.trace.c_str());
}

Test(rearm_handshake, a_paused_rail_waits_for_the_health_layer) {
    Sim s;
    s.break_both();
    for (int i = 0; i < 5; ++i) {
        s.now += kTimeout;
        s.tick(s.leader, false);
        s.tick(s.follower, false);
    }
    cr_expect_eq(s.leader.st.care, RailCare::Broken);
    cr_expect_eq(s.follower.st.care, RailCare::Broken);
    cr_expect(s.leader.inbox.empty() && s.follower.inbox.empty(), "nothing sent while paused");
}

Test(rearm_handshake, an_unanswered_dial_is_abandoned) {
    RearmState rearming{RailCare::Rearming, 3, TimePoint{}};
    RearmEvent tick{Kind::Tick};
    tick.idle = true;
    RearmStep r = rearm_step(RearmRole::Leader, rearming, tick, TimePoint{} + kTimeout / 2, kTimeout, 9);
    cr_expect_eq(r.next.care, RailCare::Rearming);
    cr_expect(r.actions.rearm, "the dial is driven on each tick");
    r = rearm_step(RearmRole::Leader, rearming, tick, TimePoint{} + kTimeout, kTimeout, 9);
    cr_expect_eq(r.next.care, RailCare::Broken);
    cr_expect(r.actions.fail_rail && r.actions.gave_up);
}

// Random schedules: each step delivers one side's next frame, completes
// the probe, ticks a side (sometimes not allowed), advances time or fails
// one end; after the faults stop, the rail must come back within a bounded
// number of rounds.
Test(rearm_handshake, random_schedules_always_end_in_use) {
    for (unsigned seed = 1; seed <= 3000; ++seed) {
        std::mt19937 rng(seed);
        Sim s;
        s.break_both();
        const int fault_steps = static_cast<int>(rng() % 60);
        for (int step = 0; step < fault_steps; ++step) {
            switch (rng() % 9) {
            case 0: s.deliver(s.leader); break;
            case 1: s.deliver(s.follower); break;
            case 2: s.complete_probe(); break;
            case 3: s.tick(s.leader, rng() % 4 != 0); break;
            case 4: s.tick(s.follower, rng() % 4 != 0); break;
            case 5: s.now += kTimeout / static_cast<int>(1 + rng() % 4); break;
            case 6:
                if (rng() % 3 == 0) s.fail(rng() % 2 ? s.leader : s.follower);
                break;
            case 7:
                if (rng() % 5 == 0) s.drop_next_to_follower = true;
                break;
            case 8:
                if (rng() % 5 == 0) s.drop_next_to_leader = true;
                break;
            }
        }
        s.drop_next_to_follower = s.drop_next_to_leader = false;
        cr_assert(s.settle(400), "seed %u: %s", seed, s.trace.c_str());
    }
}
