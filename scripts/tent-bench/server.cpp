// The server: offers one region of depth x size bytes to the client's writes
// and reads, receives its messages, and checks what arrived when asked.
#include <algorithm>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "tent-bench/bootstrap.h"
#include "tent-bench/engine_setup.h"
#include "tent-bench/pattern.h"
#include "tent-bench/run.h"
#include "tent-bench/stats_ticker.h"
#include "tent-bench/write_check.h"

namespace tent_bench {

namespace {

// Receives the client's messages on the thread driving the engine (its
// progress thread, or this program's in tent_wait()) and checks
// their length, sequence number (order, exactly once) and content. A
// number passed over is noted: a send that failed at the client may be
// missing (its sender gave up on it), any other may not (checked at the
// end, against the client's list).
struct Receiver {
    std::uint64_t size = 0;
    bool check = false;
    std::atomic<std::uint64_t> received{0};
    std::atomic<std::uint64_t> next_seq{0};  // the number the next message should carry, at least
    std::atomic<std::uint64_t> mismatches{0};
    std::mutex mu;
    std::string detail;  // the first mismatch
    std::vector<std::uint64_t> passed_over;  // under mu, in order

    static constexpr std::uint64_t kMaxPassedOver = 1 << 20;

    void note(std::string what) {
        mismatches.fetch_add(1);
        std::lock_guard lock(mu);
        if (detail.empty()) detail = std::move(what);
    }

    void on_message(const std::uint8_t* p, std::size_t n) {
        std::uint64_t seq = next_seq.load(std::memory_order_relaxed);
        if (check) {
            const std::uint64_t carried = n == size ? read_seq(p, n) : seq;
            if (n != size) {
                note("message " + std::to_string(seq) + " has " + std::to_string(n) + " bytes, not " +
                     std::to_string(size));
            } else if (carried < seq || carried - seq > kMaxPassedOver) {
                note("message " + std::to_string(received.load()) + " arrived carrying sequence number " +
                     std::to_string(carried) + ", after " + std::to_string(seq) + " was due (out of order or duplicated)");
            } else {
                {
                    std::lock_guard lock(mu);
                    for (std::uint64_t s = seq; s < carried && passed_over.size() < kMaxPassedOver; ++s)
                        passed_over.push_back(s);
                }
                seq = carried;
                if (std::size_t at = find_mismatch(p, n, seq, 8); at != n)
                    note("message " + std::to_string(seq) + " differs at byte " + std::to_string(at));
            }
        }
        next_seq.store(seq + 1, std::memory_order_release);
        received.fetch_add(1, std::memory_order_release);
    }
};

void on_recv(tent_peer_t*, const void* data, std::size_t length, void* arg) {
    static_cast<Receiver*>(arg)->on_message(static_cast<const std::uint8_t*>(data), length);
}

int fail(const std::string& what) {
    std::fprintf(stderr, "tent-bench: %s\n", what.c_str());
    return 1;
}

} // namespace

int run_server(const Options& o) {
    Socket listener, peer;
    std::uint16_t port = 0;
    std::string error;
    if (!listen_on(o.host, o.port, listener, port, error)) return fail(error);
    std::printf("tent-bench: listening on %s:%u\n", o.host.c_str(), static_cast<unsigned>(port));
    std::fflush(stdout);
    if (!accept_one(listener, peer, error)) return fail(error);

    RunParams p;
    if (!peer.recv_all(&p, sizeof p) || p.magic != kMagic) return fail("the client did not send its parameters");
    if (p.op > 2 || p.depth == 0 || p.depth > kMaxDepth || p.size == 0 || p.size > (1ull << 32) ||
        p.size * p.depth > (64ull << 30) || p.background_op > 1 || p.background_depth > kMaxDepth ||
        p.background_size > (1ull << 32) || p.background_size * p.background_depth > (64ull << 30))
        return fail("the client's parameters are out of range");
    // The background stream's slots follow the measured stream's.
    const std::uint64_t slot_bytes = p.size * p.depth + p.background_size * p.background_depth;
    // Then the answers of checked writes (write_check.h), 8-byte aligned.
    const std::uint64_t answers_at = (slot_bytes + 7) / 8 * 8;
    const std::uint64_t region_bytes = answers_at + std::uint64_t{p.depth} * sizeof(WriteNote);
    Op op = static_cast<Op>(p.op);
    bool check = p.check != 0;

    EnginePtr engine;
    if (!make_engine(o, engine, error)) return fail(error);
    Receiver receiver;
    receiver.size = p.size;
    receiver.check = check;
    std::vector<std::uint8_t> region;
    try {
        region.assign(region_bytes, 0);
    } catch (const std::bad_alloc&) {
        return fail("cannot allocate " + std::to_string(region_bytes) + " bytes");
    }
    if (op == Op::Read && check)
        for (std::uint32_t s = 0; s < p.depth; ++s) fill_pattern(region.data() + s * p.size, p.size, s);

    tent_mem_t* m = nullptr;
    int rc = tent_mem_register(engine.get(), region.data(), region.size(), TENT_ACCESS_ALL, &m);
    if (rc != TENT_OK) return fail(std::string("cannot register memory: ") + tent_strerror(rc));
    MemPtr mem(m);
    if (op == Op::Send) {
        rc = tent_set_recv_callback(engine.get(), on_recv, &receiver);
        if (rc != TENT_OK) return fail(std::string("cannot set the receive callback: ") + tent_strerror(rc));
    }
    const void* blob = nullptr;
    const void* key = nullptr;
    std::size_t blob_len = 0, key_len = 0;
    if (tent_engine_address(engine.get(), &blob, &blob_len) != TENT_OK ||
        tent_mem_remote_key(mem.get(), &key, &key_len) != TENT_OK)
        return fail("cannot get the address blob or remote key");
    std::vector<std::uint8_t> blob_bytes(static_cast<const std::uint8_t*>(blob),
                                         static_cast<const std::uint8_t*>(blob) + blob_len);
    std::vector<std::uint8_t> key_bytes(static_cast<const std::uint8_t*>(key),
                                        static_cast<const std::uint8_t*>(key) + key_len);
    if (!peer.send_bytes(blob_bytes) || !peer.send_bytes(key_bytes) ||
        !peer.send_u64(reinterpret_cast<std::uint64_t>(region.data())))
        return fail("the client went away during setup");

    // The run happens now, between the engines; the bootstrap socket waits
    // for the client's "done": its count of successful operations and, for
    // writes, the sequence number of the last write into each slot.
    std::uint64_t ops_ok = 0;
    std::vector<std::uint64_t> last_seq(p.depth);
    std::vector<std::uint64_t> failed;  // the client's failed operations, in order
    // Checked writes: each one is verified here, at its target, when the
    // client's note says it completed (write_check.h).
    const bool verify_writes = op == Op::Write && p.check == kVerifyWrites;
    WriteVerifier verifier(engine.get(), region.data(), p.size, p.depth,
                           reinterpret_cast<WriteNote*>(region.data() + answers_at));
    if (verify_writes && !verifier.start(error)) return fail(error);
    {
        StatsTicker ticker(engine.get(), o.stats_interval_ms);
        tent_completion_t comps[64];
        // Until the client says it is done (its notes are all answered by then).
        for (pollfd pfd{peer.fd(), POLLIN, 0}; verify_writes && ::poll(&pfd, 1, 0) == 0;) {
            int n = tent_poll(engine.get(), comps, 64);
            for (int i = 0; i < n; ++i) verifier.on_completion(comps[i]);
            if (n <= 0) (void)tent_wait(engine.get(), 10);
        }
        std::uint64_t failures = 0;
        if (!peer.recv_u64(ops_ok) || !peer.recv_all(last_seq.data(), last_seq.size() * 8) ||
            !peer.recv_u64(failures) || failures > (1u << 24))
            return fail("the client went away before it was done");
        failed.resize(failures);
        if (!peer.recv_all(failed.data(), failures * 8)) return fail("the client went away before it was done");
    }

    std::uint64_t mismatches = 0;
    std::string detail;
    std::uint64_t noted_at_count = 0;  // the receiver's findings when the check was made
    if (op == Op::Send) {
        // Every message the client sent without an error must arrive; one
        // that failed there may or may not. A send completes at the sender
        // before the receiver may have handed the message over: wait
        // (bounded) for the stragglers, up to the last that must come.
        const auto failed_here = [&](std::uint64_t s) { return std::binary_search(failed.begin(), failed.end(), s); };
        const std::uint64_t total = ops_ok + failed.size();
        std::uint64_t must_end = 0;  // one past the last message that must arrive
        for (std::uint64_t s = total; s > 0 && must_end == 0; --s)
            if (!failed_here(s - 1)) must_end = s;
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (receiver.next_seq.load() < must_end && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        mismatches = noted_at_count = receiver.mismatches.load();
        std::uint64_t lost = 0, first_lost = 0;
        {
            std::lock_guard lock(receiver.mu);
            detail = receiver.detail;
            for (std::uint64_t s : receiver.passed_over)
                if (!failed_here(s) && lost++ == 0) first_lost = s;
        }
        for (std::uint64_t s = receiver.next_seq.load(); s < must_end; ++s)
            if (!failed_here(s) && lost++ == 0) first_lost = s;
        if (lost > 0) {
            mismatches += lost;
            if (detail.empty())
                detail = std::to_string(lost) + " messages sent without an error never arrived, the first " +
                         std::to_string(first_lost) + " (" + std::to_string(receiver.received.load()) +
                         " received, " + std::to_string(ops_ok) + " sent without an error)";
        }
    } else if (op == Op::Write && check) {
        if (verify_writes) {
            mismatches = verifier.mismatches();
            detail = verifier.detail();
            if (verifier.verified() + mismatches < ops_ok) {
                ++mismatches;
                if (detail.empty())
                    detail = std::to_string(ops_ok) + " writes completed, " + std::to_string(verifier.verified()) +
                             " verified here";
            }
            // The last answers' completions, before the engine goes (bounded).
            tent_completion_t comps[64];
            for (int i = 0; i < 100 && verifier.answers_in_flight() > 0; ++i) {
                int n = tent_poll(engine.get(), comps, 64);
                for (int k = 0; k < n; ++k) verifier.on_completion(comps[k]);
                if (n <= 0) (void)tent_wait(engine.get(), 10);
            }
        }
        for (std::uint32_t s = 0; s < p.depth; ++s) {
            const std::uint8_t* slot = region.data() + s * p.size;
            std::string bad;
            if (last_seq[s] == kNoSeq) {
                for (std::size_t i = 0; i < p.size && bad.empty(); ++i)
                    if (slot[i]) bad = "slot " + std::to_string(s) + " was never written but byte " +
                                       std::to_string(i) + " changed";
            } else if (last_seq[s] == kNoSeq - 1) {
                continue;  // its last write failed: undefined, and already an error
            } else if (!seq_matches(slot, p.size, last_seq[s])) {
                bad = "slot " + std::to_string(s) + " does not hold write " + std::to_string(last_seq[s]) +
                      " (holds " + std::to_string(read_seq(slot, p.size)) + ")";
            } else if (std::size_t at = find_word_mismatch(slot, p.size, last_seq[s], 8); at != p.size) {
                bad = "slot " + std::to_string(s) + " differs at byte " + std::to_string(at);
            }
            if (!bad.empty()) {
                ++mismatches;
                if (detail.empty()) detail = bad;
            }
        }
    }
    std::vector<std::uint8_t> detail_bytes(detail.begin(), detail.end());
    if (!peer.send_u64(mismatches) || !peer.send_u64(receiver.received.load()) || !peer.send_bytes(detail_bytes))
        return fail("the client went away before the check result");
    // Stay connected until the client has closed its engine (bounded).
    timeval tv{30, 0};
    (void)setsockopt(peer.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char byte;
    (void)::recv(peer.fd(), &byte, 1, 0);
    // Exactly once: a message delivered again after the check was made
    // (the client's engine is closed now, nothing more can come) breaks the
    // order the receiver checks.
    if (op == Op::Send && receiver.mismatches.load() > noted_at_count) {
        mismatches += receiver.mismatches.load() - noted_at_count;
        std::lock_guard lock(receiver.mu);
        if (detail.empty()) detail = receiver.detail + " (after the check)";
    }

    if (o.json)
        std::printf("{\"role\":\"server\",\"op\":\"%s\",\"size\":%llu,\"received\":%llu,\"verified\":%llu,"
                    "\"mismatches\":%llu}\n",
                    op_name(op), (unsigned long long)p.size, (unsigned long long)receiver.received.load(),
                    (unsigned long long)verifier.verified(), (unsigned long long)mismatches);
    else if (verify_writes)
        std::printf("tent-bench: %s run done, %s, %llu writes verified at their target\n", op_name(op),
                    mismatches ? "CHECK FAILED" : "every byte checked", (unsigned long long)verifier.verified());
    else
        std::printf("tent-bench: %s run done, %s\n", op_name(op),
                    !check ? "not checked" : mismatches ? "CHECK FAILED" : "every byte checked");
    if (mismatches) std::fprintf(stderr, "tent-bench: check failed: %s\n", detail.c_str());
    return mismatches ? 1 : 0;
}

} // namespace tent_bench
