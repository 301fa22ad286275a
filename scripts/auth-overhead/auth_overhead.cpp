// The cost of authenticating connections (tent(7), SECURITY), in one run:
// engines with the job-key handshake and engines without it (auth = false),
// over real TCP rails on 127.0.0.1, both responders alive at once and
// their connects alternated one by one, so that both see the same machine
// load.
//   set-up   median time of Engine::connect() (control connection and every
//            TCP rail socket, each with its handshake) over --connects, each
//            from an engine of its own (a second connect() between the same
//            two engines returns their connection), and the median
//            difference of connects side by side;
//   first    the same until a message sent right after connect() has
//            arrived at the responder, every byte checked: the set-up as
//            the responder sees it, which takes the connection only once
//            the initiator's Proof is right;
//   start    the same with the initiator's Engine::create() before it: what
//            a process pays for its first connection;
//   rate     small messages per second, --depth in flight, for --seconds,
//            each round once with and once without, and the median ratio
//            of each round's two (the rate drifts by a few percent over a
//            run on a busy machine: the pair cancels it).
// Prints one line per figure with both values and the ratio; exits 1 only
// when a run failed. Usage: auth-overhead [--rounds N] [--connects N]
// [--seconds S] [--size BYTES] [--depth N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "engine/default_providers.h"
#include "engine/engine.h"

using namespace tent;
using Wall = std::chrono::steady_clock;

namespace {

struct Options {
    int rounds = 5;
    int connects = 40;
    double seconds = 1.0;
    std::size_t size = 64;
    int depth = 32;
};

Config config_for(bool auth) {
    Config c;
    Source api{Source::Kind::Api, "", 0, "auth-overhead"};
    (void)c.set(Knob::ControlAddress, "127.0.0.1", api);
    (void)c.set(Knob::TcpRailAddresses, "127.0.0.1,127.0.0.2", api);  // two rails: two rail handshakes
    (void)c.set(Knob::Auth, auth ? "true" : "false", api);
    (void)c.set(Knob::JobKey, "auth-overhead: a job key of some length", api);
    (void)c.set(Knob::LogLevel, "error", api);
    (void)c.set(Knob::StatsEnable, "false", api);
    return c;
}

std::unique_ptr<Engine> make_engine(const Config& config) {
    auto providers = make_default_providers(config);
    if (!providers) return nullptr;
    auto e = Engine::create(config, std::move(*providers));
    if (!e) {
        std::fprintf(stderr, "auth-overhead: %s\n", e.status().to_string().c_str());
        return nullptr;
    }
    return std::move(*e);
}

struct FirstConnect {
    double start_us = -1;    // Engine::create() and connect()
    double connect_us = -1;  // connect() alone
    double first_us = -1;    // connect() and a first message received by the responder
};

// A message from a to b right after a connected; true once b has it, every
// byte as sent. Bounded: 5 s.
bool first_message(Engine& a, PeerId peer, Engine& b) {
    static std::uint64_t round = 0;
    ++round;
    std::vector<std::uint8_t> msg(64), got(64, 0);
    for (std::size_t i = 0; i < msg.size(); ++i) msg[i] = static_cast<std::uint8_t>(round * 131 + i);
    if (!b.post_recv(got.data(), got.size(), round)) return false;
    PostOptions opt;
    if (!a.post_send(peer, msg.data(), msg.size(), opt)) return false;
    std::vector<EngineCompletion> done;
    const auto until = Wall::now() + std::chrono::seconds(5);
    while (Wall::now() < until) {
        done.clear();
        b.wait(std::chrono::milliseconds(10));
        b.poll(done, 8);
        for (const auto& c : done)
            if (c.cookie == round) return c.status.is_ok() && got == msg;
    }
    return false;
}

// A fresh engine's first connection to b, timed; negative on failure. The
// engine is gone when this returns, and b has seen it go: an initiator
// left alive would keep the machine busier with every connect (heartbeats
// of dozens of idle engines), and one leaving would keep b busy during the
// next.
FirstConnect first_connect(const Config& config, Engine& b) {
    FirstConnect t;
    auto t0 = Wall::now();
    auto a = make_engine(config);
    if (!a) return t;
    auto t1 = Wall::now();
    auto peer = a->connect(b.address());
    auto t2 = Wall::now();
    if (!peer) {
        std::fprintf(stderr, "auth-overhead: connect: %s\n", peer.status().to_string().c_str());
        return t;
    }
    if (!first_message(*a, *peer, b)) {
        std::fprintf(stderr, "auth-overhead: the first message did not arrive intact\n");
        return t;
    }
    auto t3 = Wall::now();
    // The sender's completion too, so that nothing is in flight when a goes.
    std::vector<EngineCompletion> done;
    for (int i = 0; i < 500 && a->poll(done, 8) == 0; ++i) a->wait(std::chrono::milliseconds(10));
    a.reset();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    t.start_us = std::chrono::duration<double, std::micro>(t2 - t0).count();
    t.connect_us = std::chrono::duration<double, std::micro>(t2 - t1).count();
    t.first_us = std::chrono::duration<double, std::micro>(t3 - t1).count();
    return t;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// The receiver's buffers: owned by the caller and declared before the
// engines, so that they outlive the receiving engine (a message it is
// still placing must not land in freed memory).
using RecvBuffers = std::vector<std::vector<std::uint8_t>>;

// Messages per second from a to b, or negative on failure. Returns once
// every message sent has also been received.
double message_rate(Engine& a, Engine& b, PeerId peer, const Options& o, RecvBuffers& bufs) {
    std::vector<std::uint8_t> msg(o.size, 0x5a);
    bufs.assign(static_cast<std::size_t>(o.depth), std::vector<std::uint8_t>(o.size));
    for (std::size_t i = 0; i < bufs.size(); ++i)
        if (!b.post_recv(bufs[i].data(), bufs[i].size(), i)) return -1;
    std::vector<EngineCompletion> done;
    std::uint64_t completed = 0, received = 0;
    int inflight = 0;
    const auto end = Wall::now() + std::chrono::duration<double>(o.seconds);
    auto t0 = Wall::now();
    double seconds = 0;
    // Bounded by the deadline (and 10 s more for stragglers); each round posts or polls.
    while (Wall::now() < end || inflight > 0 || received < completed) {
        while (inflight < o.depth && Wall::now() < end) {
            PostOptions opt;
            if (!a.post_send(peer, msg.data(), msg.size(), opt)) return -1;
            ++inflight;
        }
        // Both engines are driven from here, each poll a turn: a wait() on
        // the sender would sleep while the receiver's engine, polled by
        // this thread a moment ago, leaves its acknowledgements to its own
        // progress thread (it keeps out of the way for a grace of 5 ms),
        // and the figure would count those naps (about 6,000 messages per
        // second), not the messages.
        done.clear();
        a.poll(done, 64);
        for (const auto& c : done) {
            if (!c.status) return -1;
            --inflight;
            ++completed;
        }
        if (inflight == 0 && seconds == 0 && Wall::now() >= end)
            seconds = std::chrono::duration<double>(Wall::now() - t0).count();
        // Receives: repost the buffer that was filled, so the peer never runs dry.
        done.clear();
        b.poll(done, 64);
        for (const auto& c : done) {
            if (!c.status || c.cookie >= bufs.size()) return -1;
            ++received;
            if (!b.post_recv(bufs[c.cookie].data(), bufs[c.cookie].size(), c.cookie)) return -1;
        }
        if (Wall::now() > end + std::chrono::seconds(10)) return -1;  // stuck
    }
    if (seconds == 0) seconds = std::chrono::duration<double>(Wall::now() - t0).count();
    return static_cast<double>(completed) / seconds;
}

} // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        if (a == "--rounds") o.rounds = std::atoi(argv[i + 1]);
        else if (a == "--connects") o.connects = std::atoi(argv[i + 1]);
        else if (a == "--seconds") o.seconds = std::atof(argv[i + 1]);
        else if (a == "--size") o.size = static_cast<std::size_t>(std::atol(argv[i + 1]));
        else if (a == "--depth") o.depth = std::atoi(argv[i + 1]);
        else {
            std::fprintf(stderr, "auth-overhead: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (o.rounds < 1 || o.connects < 1 || o.seconds <= 0 || o.size < 1 || o.depth < 1) {
        std::fprintf(stderr, "auth-overhead: every option must be positive\n");
        return 2;
    }
    std::vector<double> setup[2], start[2], first[2], rate[2];  // [0] without, [1] with authentication
    // Each connect with auth minus the one without next to it: load that
    // drifts over a round cancels out of these.
    std::vector<double> paired, paired_first;
    std::vector<double> paired_rate;  // each round's rate with auth over its rate without
    for (int r = 0; r < o.rounds; ++r) {
        // Both responders at once, their connects alternated one by one:
        // both see the same moment of the machine's load.
        std::vector<double> us[2], start_us[2], first_us[2];
        {
            const Config configs[2] = {config_for(false), config_for(true)};
            std::unique_ptr<Engine> b[2];
            for (int auth = 0; auth < 2; ++auth)
                if (!(b[auth] = make_engine(configs[auth]))) return 1;
            for (int i = 0; i < o.connects; ++i)
                for (int pass = 0; pass < 2; ++pass) {
                    // Alternate which goes first, so neither always runs on a warmer machine.
                    const int auth = (pass == 0) == (i % 2 == 0) ? 1 : 0;
                    const FirstConnect t = first_connect(configs[auth], *b[auth]);
                    if (t.connect_us < 0) {
                        std::fprintf(stderr, "auth-overhead: (round %d, %s)\n", r, auth ? "with auth" : "without auth");
                        return 1;
                    }
                    us[auth].push_back(t.connect_us);
                    start_us[auth].push_back(t.start_us);
                    first_us[auth].push_back(t.first_us);
                }
        }
        for (std::size_t i = 0; i < us[0].size() && i < us[1].size(); ++i) {
            paired.push_back(us[1][i] - us[0][i]);
            paired_first.push_back(first_us[1][i] - first_us[0][i]);
        }
        // The rate with one pair alive at a time (the other's idle connections would take a share).
        for (int pass = 0; pass < 2; ++pass) {
            const int auth = (pass == 0) == (r % 2 == 0) ? 1 : 0;
            RecvBuffers bufs;  // before the engines: it outlives them
            const Config config = config_for(auth == 1);
            auto a = make_engine(config), b = make_engine(config);
            if (!a || !b) return 1;
            auto peer = a->connect(b->address());
            if (!peer) return 1;
            double mps = message_rate(*a, *b, *peer, o, bufs);
            if (mps < 0) {
                std::fprintf(stderr, "auth-overhead: a message failed\n");
                return 1;
            }
            setup[auth].push_back(median(us[auth]));
            start[auth].push_back(median(start_us[auth]));
            first[auth].push_back(median(first_us[auth]));
            rate[auth].push_back(mps);
        }
        paired_rate.push_back(rate[1].back() / rate[0].back());
    }
    const double s0 = median(setup[0]), s1 = median(setup[1]);
    const double r0 = median(rate[0]), r1 = median(rate[1]);
    const double c0 = median(start[0]), c1 = median(start[1]);
    std::printf("connection set-up (control + 2 tcp rails), median of %d rounds x %d connects: "
                "without auth %.1f us, with auth %.1f us: %+.2f%%; median of paired differences %+.1f us: %+.2f%%\n",
                o.rounds, o.connects, s0, s1, 100.0 * (s1 - s0) / s0, median(paired), 100.0 * median(paired) / s0);
    const double f0 = median(first[0]), f1 = median(first[1]);
    std::printf("set-up and a first message received (64 B), median of %d rounds x %d: without auth %.1f us, "
                "with auth %.1f us: %+.2f%%; median of paired differences %+.1f us: %+.2f%%\n",
                o.rounds, o.connects, f0, f1, 100.0 * (f1 - f0) / f0, median(paired_first),
                100.0 * median(paired_first) / f0);
    std::printf("engine start and first connection, median of %d rounds x %d: without auth %.1f us, with auth %.1f us: "
                "%+.2f%%\n",
                o.rounds, o.connects, c0, c1, 100.0 * (c1 - c0) / c0);
    std::printf("message rate (%zu B, depth %d, %.1f s), median of %d rounds: without auth %.0f/s, with auth %.0f/s: "
                "%+.2f%%; median of paired ratios %+.2f%%\n",
                o.size, o.depth, o.seconds, o.rounds, r0, r1, 100.0 * (r1 - r0) / r0,
                100.0 * (median(paired_rate) - 1.0));
    return 0;
}
