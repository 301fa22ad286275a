// The client: drives depth operations in flight against the server's region
// (write, read) or receive path (send), times each from post to completion,
// and reports.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "tent-bench/bootstrap.h"
#include "tent-bench/engine_setup.h"
#include "tent-bench/pattern.h"
#include "tent-bench/report.h"
#include "tent-bench/run.h"

namespace tent_bench {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint64_t kFailedSlot = kNoSeq - 1;  // last write into the slot failed
constexpr auto kStallLimit = std::chrono::seconds(30);

int fail(const std::string& what) {
    std::fprintf(stderr, "tent-bench: %s\n", what.c_str());
    return 1;
}

void on_unreachable(tent_peer_t*, int, void* arg) { static_cast<std::atomic<bool>*>(arg)->store(true); }

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

std::vector<tent_rail_stats_t> rail_stats(tent_engine_t* e) {
    std::vector<tent_rail_stats_t> v(64);
    int n = tent_rail_stats(e, v.data(), static_cast<int>(v.size()));
    v.resize(n < 0 ? 0 : static_cast<std::size_t>(std::min(n, 64)));
    return v;
}

} // namespace

int run_client(const Options& o) {
    Socket sock;
    std::string error;
    if (!connect_to(o.host, o.port, sock, error)) return fail(error);

    RunParams p;
    p.magic = kMagic;
    p.op = static_cast<std::uint32_t>(o.op);
    p.depth = o.depth;
    p.size = o.size;
    p.check = o.check;
    if (!sock.send_all(&p, sizeof p)) return fail("the server closed the bootstrap connection");

    EnginePtr engine;
    if (!make_engine(o, engine, error)) return fail(error);
    std::atomic<bool> unreachable{false};
    (void)tent_set_peer_unreachable_callback(engine.get(), on_unreachable, &unreachable);

    std::vector<std::uint8_t> blob, key;
    std::uint64_t remote = 0;
    if (!sock.recv_bytes(blob, 1u << 20) || !sock.recv_bytes(key, 4096) || !sock.recv_u64(remote))
        return fail("the server did not send its address (see its messages)");
    tent_peer_t* peer = nullptr;
    int rc = tent_connect(engine.get(), blob.data(), blob.size(), &peer);
    if (rc != TENT_OK) return fail(std::string("cannot connect to the server's engine: ") + tent_strerror(rc));
    if (!check_rails(o, engine.get(), error)) return fail(error);

    std::vector<std::uint8_t> local;
    try {
        local.assign(o.size * o.depth, 0);
    } catch (const std::bad_alloc&) {
        return fail("cannot allocate " + std::to_string(o.size * o.depth) + " bytes");
    }
    tent_mem_t* m = nullptr;
    rc = tent_mem_register(engine.get(), local.data(), local.size(), TENT_ACCESS_ALL, &m);
    if (rc != TENT_OK) return fail(std::string("cannot register memory: ") + tent_strerror(rc));
    MemPtr mem(m);
    if (o.op == Op::Write && o.check)
        for (std::uint32_t s = 0; s < o.depth; ++s) fill_pattern(local.data() + s * o.size, o.size, s, 8);

    Report r;
    r.op = o.op;
    r.size = o.size;
    r.check = o.check;
    std::vector<std::uint32_t> free_slots;
    for (std::uint32_t s = o.depth; s-- > 0;) free_slots.push_back(s);
    std::vector<Clock::time_point> posted_at(o.depth);
    std::vector<std::uint64_t> last_seq(o.depth, kNoSeq);
    std::vector<int> last_state;
    std::uint64_t posted = 0, inflight = 0;
    std::string first_error;
    auto note_error = [&](const std::string& what) {
        ++r.errors;
        if (first_error.empty()) first_error = what;
    };

    const Clock::time_point start = Clock::now();
    const Clock::time_point end = start + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(o.duration_secs));
    Clock::time_point last_completion = start, last_progress = start, next_sample = start;
    bool posting = true;
    tent_completion_t comps[64];
    for (;;) {
        Clock::time_point now = Clock::now();
        if (posting && ((o.iters && posted >= o.iters) || (!o.iters && now >= end) || unreachable.load()))
            posting = false;
        while (posting && !free_slots.empty() && (!o.iters || posted < o.iters)) {
            std::uint32_t s = free_slots.back();
            std::uint8_t* buf = local.data() + s * o.size;
            std::uint64_t remote_addr = remote + s * o.size;
            std::uint64_t cookie = (posted << 16) | s;
            if (o.check) {
                if (o.op == Op::Write) stamp_seq(buf, o.size, posted);
                else if (o.op == Op::Read) std::memset(buf, 0, o.size);
                else {
                    stamp_seq(buf, o.size, posted);
                    fill_pattern(buf, o.size, posted, 8);
                }
            }
            Clock::time_point t = Clock::now();
            if (o.op == Op::Write)
                rc = tent_post_write(peer, buf, o.size, key.data(), key.size(), remote_addr, o.priority, o.hint,
                                     cookie);
            else if (o.op == Op::Read)
                rc = tent_post_read(peer, buf, o.size, key.data(), key.size(), remote_addr, o.priority, o.hint,
                                    cookie);
            else
                rc = tent_post_send(peer, buf, o.size, o.priority, o.hint, cookie);
            if (rc == TENT_ERR_BUSY) break;  // poll, then retry
            free_slots.pop_back();
            ++posted;
            if (rc != TENT_OK) {
                note_error(std::string("post: ") + tent_strerror(rc));
                if (o.op == Op::Write) last_seq[s] = kFailedSlot;
                free_slots.push_back(s);
                if (rc == TENT_ERR_PEER_UNREACHABLE) posting = false;
                continue;
            }
            posted_at[s] = t;
            ++inflight;
            last_progress = t;
        }
        if (!posting && inflight == 0) break;

        int n = tent_poll(engine.get(), comps, 64);
        if (n < 0) return fail(std::string("poll: ") + tent_strerror(n));
        now = Clock::now();
        for (int i = 0; i < n; ++i) {
            const tent_completion_t& c = comps[i];
            auto s = static_cast<std::uint32_t>(c.cookie & 0xffff);
            std::uint64_t seq = c.cookie >> 16;
            if (s >= o.depth) continue;  // not ours
            r.max_gap_ms = std::max(r.max_gap_ms, ms_between(last_completion, now));
            last_completion = last_progress = now;
            --inflight;
            free_slots.push_back(s);
            if (c.status != TENT_OK) {
                note_error(std::string(op_name(o.op)) + " " + std::to_string(seq) + ": " + tent_strerror(c.status));
                if (o.op == Op::Write) last_seq[s] = kFailedSlot;
                continue;
            }
            ++r.ops;
            r.bytes += o.size;
            r.latencies_us.push_back(std::chrono::duration<double, std::micro>(now - posted_at[s]).count());
            if (o.op == Op::Write) last_seq[s] = seq;
            if (o.op == Op::Read && o.check) {
                const std::uint8_t* buf = local.data() + s * o.size;
                if (std::size_t at = find_mismatch(buf, o.size, s); at != o.size) {
                    ++r.mismatches;
                    if (r.check_detail.empty())
                        r.check_detail = "read " + std::to_string(seq) + " differs at byte " + std::to_string(at);
                }
            }
        }
        if (now >= next_sample) {
            // Rails leaving the healthy state during the run.
            auto stats = rail_stats(engine.get());
            last_state.resize(std::max(last_state.size(), stats.size()), 0);
            for (std::size_t i = 0; i < stats.size(); ++i) {
                if (stats[i].state != 0 && last_state[i] == 0) ++r.failovers;
                last_state[i] = stats[i].state;
            }
            next_sample = now + std::chrono::milliseconds(100);
        }
        if (n == 0) {
            if (now - last_progress > kStallLimit) {
                note_error(std::to_string(inflight) + " operations did not complete within 30 s");
                r.errors += inflight ? inflight - 1 : 0;
                break;
            }
            std::this_thread::yield();
        }
    }
    r.seconds = std::chrono::duration<double>((r.ops ? last_completion : Clock::now()) - start).count();

    // Done: tell the server, take its check result.
    std::uint64_t server_mismatches = 0, received = 0;
    std::vector<std::uint8_t> detail;
    if (!sock.send_u64(r.ops) || !sock.send_all(last_seq.data(), last_seq.size() * 8) ||
        !sock.recv_u64(server_mismatches) || !sock.recv_u64(received) || !sock.recv_bytes(detail, 1u << 16)) {
        note_error("the server did not report its check result");
    }
    r.mismatches += server_mismatches;
    if (r.check_detail.empty() && !detail.empty()) r.check_detail.assign(detail.begin(), detail.end());
    // The progress thread publishes rail statistics periodically: give it
    // (at most 500 ms) to account for the last completions.
    for (int i = 0; i < 50; ++i) {
        r.rails = rail_stats(engine.get());
        std::uint64_t sum = 0;
        for (const auto& rail : r.rails) sum += rail.bytes;
        if (sum >= r.bytes) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    for (std::size_t i = 0; i < r.rails.size() && i < last_state.size(); ++i)
        if (r.rails[i].state != 0 && last_state[i] == 0) ++r.failovers;

    std::fputs((o.json ? to_json(r) : to_text(r)).c_str(), stdout);
    std::fflush(stdout);
    if (!first_error.empty())
        std::fprintf(stderr, "tent-bench: %llu operations failed; first: %s\n", (unsigned long long)r.errors,
                     first_error.c_str());
    if (r.mismatches)
        std::fprintf(stderr, "tent-bench: check failed (%llu mismatches): %s\n", (unsigned long long)r.mismatches,
                     r.check_detail.c_str());
    // Close the engine first: the server waits for the socket to close.
    mem.reset();
    engine.reset();
    return r.errors || r.mismatches ? 1 : 0;
}

} // namespace tent_bench
