// A stranger at the door: raw connections to a running engine's control
// port and TCP rail port send garbage, truncated frames, a frame header
// with an oversized length, valid frames without authentication, a proof
// made with the wrong key, a replayed proof, and slow-loris input (many
// connections trickling bytes). Meanwhile the engine keeps serving its real
// peer (striped writes and messages, every byte checked); every stranger is
// closed without a byte beyond the challenge; the process's descriptors
// return to where they were and its memory stays bounded (RSS printed);
// the refusals are logged; and a new real peer still gets in afterwards.
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include "../../support/tcp_engine_pair.h"
#include "wire/auth_handshake.h"
#include "wire/frame_codec.h"
#include "wire/frame_header.h"

using namespace tent;
using namespace tent::test;
using namespace std::chrono_literals;

namespace {

const std::string kJobKey = "stranger-test key: 0123456789abcdef";

Config config_logging_to(const std::string& log) {
    Config c;
    Source api = api_source();
    (void)c.set(Knob::ControlAddress, "127.0.0.1", api);
    (void)c.set(Knob::TcpRailAddresses, "127.0.0.1", api);
    (void)c.set(Knob::JobKey, kJobKey, api);
    (void)c.set(Knob::ConnectTimeoutMs, "500", api);  // how long a silent stranger may stay
    (void)c.set(Knob::ChunkSize, "256K", api);
    (void)c.set(Knob::SendFragmentSize, "16K", api);
    (void)c.set(Knob::LogLevel, "warn", api);
    (void)c.set(Knob::LogDestination, log, api);
    return c;
}

long open_fds() {
    long n = 0;
    if (DIR* d = opendir("/proc/self/fd")) {
        while (readdir(d)) ++n;
        closedir(d);
    }
    return n;
}

long rss_kib() {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    return -1;
}

int dial(const wire::TcpAddress& a) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(a.port);
    std::memcpy(&sa.sin_addr, a.addr.data(), 4);
    timeval tv{5, 0};  // every read below is bounded
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

void send_bytes(int fd, const void* p, std::size_t n) { (void)!::send(fd, p, n, MSG_NOSIGNAL); }

// Reads until the engine closes the socket (or 5 s pass); returns the bytes
// read, or -1 when the socket stayed open.
long bytes_until_closed(int fd) {
    long total = 0;
    for (int i = 0; i < 1000; ++i) {
        char buf[256];
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n > 0) {
            total += n;
            continue;
        }
        if (n == 0 || errno == ECONNRESET) return total;
        return -1;  // timed out: still open
    }
    return -1;
}

wire::ChallengeBytes read_challenge(int fd) {
    wire::ChallengeBytes c{};
    std::size_t have = 0;
    for (int i = 0; i < 100 && have < c.size(); ++i) {
        ssize_t n = ::recv(fd, c.data() + have, c.size() - have, 0);
        if (n <= 0) break;
        have += static_cast<std::size_t>(n);
    }
    return c;
}

wire::Nonce nonce(std::uint8_t seed) {
    wire::Nonce n;
    for (std::size_t i = 0; i < n.size(); ++i) n[i] = static_cast<std::uint8_t>(seed ^ (i * 7));
    return n;
}

JobKey key_bytes(const std::string& s) { return JobKey(s.begin(), s.end()); }

// The stranger's repertoire against one listener; what went wrong is added
// to failures (Criterion asserts only on the main thread).
struct Stranger {
    wire::TcpAddress target;
    std::string name;
    std::vector<std::uint8_t> blob_frame;  // a valid AddressBlob frame
    std::vector<std::string>& failures;
    std::mutex& mu;
    int closed = 0;

    void fail(const std::string& what) {
        std::lock_guard lock(mu);
        failures.push_back(name + ": " + what);
    }

    // Sends bytes and expects the engine to close without a byte beyond the 40-byte challenge.
    void refused(const std::string& what, const std::vector<std::uint8_t>& bytes) {
        int fd = dial(target);
        if (fd < 0) return fail(what + ": cannot connect (the engine stopped listening?)");
        if (!bytes.empty()) send_bytes(fd, bytes.data(), bytes.size());
        long got = bytes_until_closed(fd);
        ::close(fd);
        if (got < 0) return fail(what + ": the connection stayed open");
        if (got > static_cast<long>(wire::kChallengeSize))
            return fail(what + ": the engine sent " + std::to_string(got) + " bytes");
        ++closed;
    }

    // A full handshake with `key`; returns the proof sent and whether a
    // confirmation came back (then closes at once).
    std::pair<wire::ProofBytes, bool> handshake(const JobKey& key, std::uint8_t seed) {
        int fd = dial(target);
        if (fd < 0) return {{}, false};
        wire::AuthInitiator me(nonce(seed));
        auto proof = me.on_challenge(read_challenge(fd), key);
        if (!proof) {
            ::close(fd);
            return {{}, false};
        }
        send_bytes(fd, proof->data(), proof->size());
        wire::ConfirmBytes confirm{};
        ssize_t n = ::recv(fd, confirm.data(), confirm.size(), MSG_WAITALL);
        ::close(fd);
        return {*proof, n == static_cast<ssize_t>(confirm.size()) && me.on_confirm(confirm, key).is_ok()};
    }

    void run_all(int round) {
        std::vector<std::uint8_t> garbage(4096);
        for (std::size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<std::uint8_t>(i * 131 + round);
        refused("garbage", garbage);
        refused("a truncated frame", std::vector<std::uint8_t>(blob_frame.begin(), blob_frame.begin() + 20));
        auto oversized = blob_frame;
        for (int i = 0; i < 4; ++i) oversized[wire::kPayloadLengthOffset + i] = 0xff;  // 4 GiB payload
        refused("an oversized length", oversized);
        refused("a valid frame without authentication", blob_frame);
        // An auth header that promises a proof, then a frame.
        std::vector<std::uint8_t> fake{'T', 'N', 'T', 'A', 1, 2, 0, 0};
        fake.insert(fake.end(), blob_frame.begin(), blob_frame.end());
        refused("an auth header followed by a frame", fake);
        refused("nothing at all (silent until the timeout)", {});

        auto [wrong_proof, wrong_ok] = handshake(key_bytes("a stranger's guess at the key"), 1);
        if (wrong_ok) fail("a wrong key was confirmed");
        // The job's key works on a raw socket: then its proof, replayed on a
        // new connection (a new challenge), must not.
        auto [proof, ok] = handshake(key_bytes(kJobKey), static_cast<std::uint8_t>(round + 2));
        if (!ok) fail("the job's key was not confirmed");
        std::vector<std::uint8_t> replay(proof.begin(), proof.end());
        refused("a replayed proof", replay);
    }

    // Many connections that send one byte of a plausible header now and
    // then, never finishing: all are closed within the timeout, with at
    // most AuthGate::kMaxPending held at once.
    void slow_loris(int connections) {
        std::vector<int> fds;
        for (int i = 0; i < connections; ++i)
            if (int fd = dial(target); fd >= 0) fds.push_back(fd);
        const char header[] = "TNTA";
        for (int step = 0; step < 4; ++step) {
            for (int fd : fds) send_bytes(fd, header + step, 1);
            std::this_thread::sleep_for(50ms);
        }
        int open_after = 0;
        for (int fd : fds) {
            if (bytes_until_closed(fd) < 0) ++open_after;
            ::close(fd);
        }
        if (open_after > 0) fail("slow loris: " + std::to_string(open_after) + " connections stayed open");
        closed += static_cast<int>(fds.size()) - open_after;
    }
};

} // namespace

Test(engine_stranger, strangers_are_refused_while_the_real_peer_is_served, .timeout = 180) {
    char log_path[] = "/tmp/tent-stranger-log-XXXXXX";
    int log_fd = mkstemp(log_path);
    cr_assert(log_fd >= 0);
    ::close(log_fd);
    Config config = config_logging_to(log_path);
    TcpPair p(config);
    Engine& b = *p.b;

    auto blob = wire::decode_frame(b.address());
    cr_assert(blob.is_ok());
    const auto& addresses = std::get<wire::AddressBlob>(blob->body).tcp;
    cr_assert_geq(addresses.size(), 2u, "b advertises a control and a rail address");

    CheckedStream stream(*p.a, p.peer, b, 1000);
    for (int i = 0; i < 3; ++i) stream.round();  // warm: buffers and rails in place
    const long fds_before = open_fds();
    const long rss_before = rss_kib();

    std::vector<std::string> failures;
    std::mutex failures_mu;
    std::vector<std::uint8_t> blob_frame(b.address().begin(), b.address().end());
    Stranger at_control{addresses[0], "control port", blob_frame, failures, failures_mu};
    Stranger at_rail{addresses[1], "tcp rail port", blob_frame, failures, failures_mu};
    std::atomic<bool> done{false};
    std::thread attacker([&] {
        for (int r = 0; r < 3; ++r) {
            at_control.run_all(r);
            at_rail.run_all(r);
        }
        std::thread loris_control([&] { at_control.slow_loris(100); });
        at_rail.slow_loris(100);
        loris_control.join();
        done = true;
    });
    // The real peer is served all along (bounded: the attacker's reads are).
    for (int i = 0; i < 2000 && !done; ++i) stream.round();
    attacker.join();
    stream.round();

    {
        std::lock_guard lock(failures_mu);
        for (const auto& f : failures) cr_log_error("%s", f.c_str());
        cr_assert(failures.empty(), "%zu stranger checks failed (first: %s)", failures.size(),
                  failures.empty() ? "" : failures[0].c_str());
    }
    const long fds_after = open_fds();
    const long rss_after = rss_kib();
    std::fprintf(stderr, "stranger: %d connections refused, %u real rounds served; fds %ld -> %ld, RSS %ld -> %ld KiB\n",
                 at_control.closed + at_rail.closed, stream.rounds(), fds_before, fds_after, rss_before, rss_after);
    cr_expect_eq(at_control.closed + at_rail.closed, 2 * (3 * 7 + 100));
    // Every stranger's socket is gone (the engine closed its side).
    cr_expect_leq(fds_after, fds_before + 2, "descriptors %ld -> %ld", fds_before, fds_after);
    // Bounded memory: hundreds of strangers leave no trace beyond allocator noise.
#ifndef __SANITIZE_ADDRESS__
    // Under AddressSanitizer freed memory stays in its quarantine and
    // resident: the bound is measured in the plain build only.
    cr_expect_lt(rss_after - rss_before, 16 * 1024, "RSS grew %ld KiB", rss_after - rss_before);
#endif

    // Every message exactly once, in order.
    stream.expect_every_message();

    // The door still opens for the job: a new engine with the key connects.
    std::unique_ptr<Engine> c = make_tcp_engine(config);
    auto again = c->connect(b.address());
    cr_assert(again.is_ok(), "a real peer after the strangers: %s", again.status().to_string().c_str());

    // And the refusals were logged.
    std::ifstream in(log_path);
    std::stringstream text;
    text << in.rdbuf();
    ::unlink(log_path);
    cr_expect(text.str().find("auth-refused") != std::string::npos, "no auth-refused line in the log:\n%s",
              text.str().c_str());
    cr_expect(text.str().find("does not hold this job's key") != std::string::npos);
}
