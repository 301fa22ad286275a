// The client: drives depth operations in flight against the server's region
// (write, read) or receive path (send), times each from post to completion,
// and reports. With --background-op a second stream runs on the same engine
// and peer while the measured one does.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "tent-bench/bootstrap.h"
#include "tent-bench/engine_setup.h"
#include "tent-bench/report.h"
#include "tent-bench/run.h"
#include "tent-bench/stats_ticker.h"
#include "tent-bench/stream.h"

namespace tent_bench {

namespace {

constexpr auto kStallLimit = std::chrono::seconds(30);
// SIGUSR1 ends the run as --duration's end would: a test stops the stream
// once it has seen what it waits for, however slow the machine.
volatile std::sig_atomic_t stop_requested = 0;
extern "C" void request_stop(int) { stop_requested = 1; }

constexpr int kWaitMs = 10;  // longest sleep in tent_wait() between two looks at the clock

int fail(const std::string& what) {
    std::fprintf(stderr, "tent-bench: %s\n", what.c_str());
    return 1;
}

void on_unreachable(tent_peer_t*, int, void* arg) { static_cast<std::atomic<bool>*>(arg)->store(true); }

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
    p.check = o.verify_writes ? kVerifyWrites : o.check;
    if (o.background) {
        p.background_op = static_cast<std::uint32_t>(o.background_op);
        p.background_depth = o.background_depth;
        p.background_size = o.background_size;
    }
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

    // One registration: the measured stream's slots, then the background's.
    const std::uint64_t main_bytes = o.size * (o.reuse_buffer ? 1 : o.depth);
    const std::uint64_t background_bytes = o.background ? o.background_size * o.background_depth : 0;
    // Then the notes of checked writes (write_check.h), 8-byte aligned.
    const std::uint64_t notes_at = (main_bytes + background_bytes + 7) / 8 * 8;
    const std::uint64_t notes_bytes = o.verify_writes ? o.depth * sizeof(WriteNote) : 0;
    std::vector<std::uint8_t> local;
    try {
        local.assign(notes_at + notes_bytes, 0);
    } catch (const std::bad_alloc&) {
        return fail("cannot allocate " + std::to_string(main_bytes + background_bytes) + " bytes");
    }
    tent_mem_t* m = nullptr;
    rc = tent_mem_register(engine.get(), local.data(), local.size(), TENT_ACCESS_ALL, &m);
    if (rc != TENT_OK) return fail(std::string("cannot register memory: ") + tent_strerror(rc));
    MemPtr mem(m);

    Stream main_stream(StreamSpec{o.op, o.size, o.depth, o.priority, o.hint, o.check, o.reuse_buffer, 0, local.data(),
                                  remote, o.verify_writes ? reinterpret_cast<WriteNote*>(local.data() + notes_at)
                                                          : nullptr});
    std::optional<Stream> background;
    if (o.background)
        background.emplace(StreamSpec{o.background_op, o.background_size, o.background_depth, o.background_priority,
                                      o.hint, false, false, 1, local.data() + main_bytes,
                                      remote + o.size * o.depth});  // the server's region is not shrunk

    if (!main_stream.start_checks(engine.get(), error)) return fail(error);
    std::optional<StatsTicker> ticker;
    ticker.emplace(engine.get(), o.stats_interval_ms);
    const Clock::time_point run_start = Clock::now();
    // With a background stream, the measured one starts once the background
    // has completed an operation: it then measures a loaded path.
    bool started = !background;
    Clock::time_point start = run_start, end = run_start, last_progress = run_start;
    auto begin_measuring = [&](Clock::time_point now) {
        started = true;
        start = now;
        end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.duration_secs));
    };
    if (started) begin_measuring(run_start);
    std::signal(SIGUSR1, request_stop);
    bool posting = true, background_posting = background.has_value();
    std::string stall;
    tent_completion_t comps[64];
    for (;;) {
        Clock::time_point now = Clock::now();
        if (unreachable.load()) posting = background_posting = false;
        if (posting && started && ((o.iters && main_stream.posted() >= o.iters) || (!o.iters && now >= end)))
            posting = false;
        if (stop_requested) posting = background_posting = false;
        if (!posting) background_posting = false;  // the background ends with the measured stream
        if (background_posting) background_posting = background->post(peer, key, 0);
        if (posting && started) posting = main_stream.post(peer, key, o.iters);
        main_stream.send_notes(peer);
        std::uint64_t inflight = main_stream.inflight() + (background ? background->inflight() : 0);
        if (!posting && !background_posting && inflight == 0) break;

        int n = tent_poll(engine.get(), comps, 64);
        if (n < 0) return fail(std::string("poll: ") + tent_strerror(n));
        now = Clock::now();
        for (int i = 0; i < n; ++i) {
            if (comps[i].cookie & kCheckCookie) {
                main_stream.check_completion(comps[i]);
            } else if (cookie_tag(comps[i].cookie) == 1 && background) {
                background->complete(comps[i], now);
                if (!started) begin_measuring(now);
            } else {
                main_stream.complete(comps[i], now);
            }
        }
        if (n > 0) {
            last_progress = now;
        } else if (inflight > 0 && now - last_progress > kStallLimit) {
            stall = std::to_string(inflight) + " operations did not complete within 30 s";
            main_stream.abandon(stall, now);
            if (background) background->abandon(stall, now);
            break;
        } else {
            if (!started && now - run_start > kStallLimit) begin_measuring(now);  // background never completed
            // Nothing to post until something completes: sleep until it does
            // rather than spin, which takes the CPU the engine's progress
            // thread needs. The timeout bounds how late the end of the run,
            // a stall and an unreachable peer are noticed.
            rc = tent_wait(engine.get(), kWaitMs);
            if (rc < 0) return fail(std::string("wait: ") + tent_strerror(rc));
        }
    }
    Report& r = main_stream.report();
    r.seconds = std::chrono::duration<double>((r.ops ? main_stream.last_completion() : Clock::now()) - start).count();
    if (background) {
        const Report& b = background->report();
        r.has_background = true;
        r.background = BackgroundReport{o.background_op, o.background_size, o.background_depth,
                                        o.background_priority, b.ops, b.bytes, 0, b.errors};
        if (b.ops)
            r.background.seconds =
                std::chrono::duration<double>(background->last_completion() - background->first_post()).count();
    }
    const std::vector<std::uint64_t>& last_seq = main_stream.last_seq();
    const std::vector<std::uint64_t>& failed = main_stream.failed_seqs();
    if (o.verify_writes && stall.empty() && main_stream.verified() + r.mismatches < r.ops) {
        ++r.mismatches;
        if (r.check_detail.empty())
            r.check_detail = std::to_string(r.ops) + " writes completed, " + std::to_string(main_stream.verified()) +
                             " verified at the server";
    }

    // Done: tell the server, take its check result.
    std::uint64_t server_mismatches = 0, received = 0;
    std::vector<std::uint8_t> detail;
    if (!sock.send_u64(r.ops) || !sock.send_all(last_seq.data(), last_seq.size() * 8) ||
        !sock.send_u64(failed.size()) || !sock.send_all(failed.data(), failed.size() * 8) ||
        !sock.recv_u64(server_mismatches) || !sock.recv_u64(received) || !sock.recv_bytes(detail, 1u << 16)) {
        ++r.errors;
        if (main_stream.first_error().empty() && stall.empty()) stall = "the server did not report its check result";
    }
    r.mismatches += server_mismatches;
    if (r.check_detail.empty() && !detail.empty()) r.check_detail.assign(detail.begin(), detail.end());
    // The progress thread publishes rail statistics periodically: give it
    // (at most 500 ms) to account for the last completions.
    for (int i = 0; i < 50; ++i) {
        r.rails = rail_stats(engine.get());
        std::uint64_t sum = 0;
        for (const auto& rail : r.rails) sum += rail.bytes;
        if (sum >= r.bytes + r.background.bytes) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    r.failovers = total_failovers(r.rails);
    ticker.reset();  // its last sample, before the report

    std::fputs((o.json ? to_json(r) : to_text(r)).c_str(), stdout);
    std::fflush(stdout);
    const std::string& first_error = !main_stream.first_error().empty() ? main_stream.first_error() : stall;
    if (r.errors)
        std::fprintf(stderr, "tent-bench: %llu operations failed; first: %s\n", (unsigned long long)r.errors,
                     first_error.c_str());
    if (r.background.errors)
        std::fprintf(stderr, "tent-bench: %llu background operations failed; first: %s\n",
                     (unsigned long long)r.background.errors, background->first_error().c_str());
    if (r.mismatches)
        std::fprintf(stderr, "tent-bench: check failed (%llu mismatches): %s\n", (unsigned long long)r.mismatches,
                     r.check_detail.c_str());
    // Close the engine first: the server waits for the socket to close.
    mem.reset();
    engine.reset();
    return r.errors || r.mismatches || r.background.errors ? 1 : 0;
}

} // namespace tent_bench
