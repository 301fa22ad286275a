// Engine: the data path every surface (C API, interposer, BTL) stands on.
//
//   auto engine = Engine::create(config, providers);      // starts the progress thread
//   auto reg = (*engine)->register_memory(buf, len, wire::kAccessAll);
//   auto peer = (*engine)->connect(peer_blob);            // bounded by connect_timeout_ms
//   (*engine)->post_write(*peer, buf, len, remote_handle, remote_addr, {.cookie = 7});
//   (*engine)->poll(out, 16);                             // completions, in any order
//   (*engine)->wait(std::chrono::milliseconds(10));       // or sleep until one is ready
//
// Ownership: the engine owns the providers, the memory registry, every
// connection and its rails, and one progress thread that drives them, serves
// the passive side of connections and reassembles incoming messages without
// the application calling in. Public calls are thread-safe and never block on
// the network except connect().
//
// Driving (engine_drive.cpp): one thread at a time runs a progress turn,
// the one holding drive_mutex_; nobody holds it while sleeping. With
// caller_progress an application thread inside poll() or wait() drives the
// engine itself, and a post starts its request at once when no turn is
// running: the hand-offs to and from the progress thread (a wake-up each
// way per operation) are gone while the application calls in, and the
// progress thread sleeps until it stops calling (kApplicationGrace).
//
// Every operation gets a per-connection sequence number; one-sided transfers
// above striping_threshold are striped over the rails (chunk_plan.h), the
// chunk ending the transfer posted last; messages are fragmented
// (send_fragment_size) and delivered exactly once, in order
// (send_reassembler.h), within the window the receiver grants (send_flow.h:
// its memory for a peer's messages is bounded; a sender beyond it waits).
//
// Failover (engine_failover.cpp, engine_rail_care.cpp, engine_control.cpp):
// a piece (chunk or fragment) whose rail fails is replayed on another rail
// of its transport, then on the next transport, never back to one it left
// (policy/failover_route.h), within max_failover_attempts per piece
// (policy/replay_decision.h); a SEND fragment only
// after the peer said over the control channel that its message was not
// delivered. Rails are declared failed by their own errors, local port
// events or silence; failed verbs rails are re-armed on both sides when the
// health layer allows, probed, and then carry traffic again. Pieces with no
// usable rail wait up to failover_timeout_ms, then fail with
// PeerUnreachable naming every rail and why. A peer whose control
// connection closes is reported unreachable and its requests fail.
//
// Fault injection: with the [fault] knobs set, add_rail() wraps each rail
// they select in a FaultRail (transport/fault/fault_rail.h).
#pragma once

#include <poll.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "health/rail_events.h"
#include "config/config.h"
#include "engine/engine_params.h"
#include "engine/engine_types.h"
#include "engine/memory_registry.h"
#include "engine/op_pool.h"
#include "common/node_spares.h"
#include "engine/watched_time.h"
#include "common/unique_fd.h"
#include "metrics/process_stats.h"
#include "metrics/registry.h"
#include "metrics/tent_metrics.h"
#include "policy/device_selector.h"
#include "policy/qos_window.h"
#include "policy/replay_decision.h"
#include "policy/transport_selector.h"
#include "topology/topology.h"
#include "transport/fault/fault_params.h"
#include "transport/provider.h"
#include "transport/tcp/auth_socket.h"
#include "wire/address_blob.h"
#include "wire/frame.h"

namespace tent {

struct Connection;
struct RailSlot;
struct Op;
struct ParkedPiece;
struct RearmEvent;
class RailMonitor;
class QosQueue;
class SharedSlots;
class StatsPublisher;

class Engine final : public RailSink, private RailObserver {
public:
    // Configures logging and the crash reporter from config, loads the
    // machine's topology (topology_xml) and compiles the [policy] rules.
    static Result<std::unique_ptr<Engine>> create(const Config& config,
                                                  std::vector<std::unique_ptr<TransportProvider>> providers);
    // Same with a given topology (tests: Topology::from_devices).
    static Result<std::unique_ptr<Engine>> create(const Config& config,
                                                  std::vector<std::unique_ptr<TransportProvider>> providers,
                                                  Topology topology);
    ~Engine() override;
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    std::uint64_t id() const { return blob_.engine_id; }
    // The encoded wire::AddressBlob a peer passes to connect().
    const std::vector<std::uint8_t>& address() const { return blob_bytes_; }

    Result<std::shared_ptr<const Registration>> register_memory(void* addr, std::uint64_t length,
                                                                std::uint16_t access);
    Status deregister_memory(std::uint64_t registration_id);

    // The connection with the engine at peer_address: the one this pair of
    // engines already has, whichever opened it, or a new one
    // (connection_pairing.h).
    Result<PeerId> connect(std::span<const std::uint8_t> peer_address);
    // Replaces the job's key (tent_engine_set_job_key): used by every
    // handshake from now on, including those waiting for it.
    void set_job_key(JobKey key);
    bool job_key_required() const { return job_key_->required(); }

    // remote_handle: the peer's encoded wire::MemoryHandle. local must lie in
    // a registration of this engine.
    Status post_write(PeerId peer, void* local, std::uint64_t length, std::span<const std::uint8_t> remote_handle,
                      std::uint64_t remote_addr, const PostOptions& options);
    Status post_read(PeerId peer, void* local, std::uint64_t length, std::span<const std::uint8_t> remote_handle,
                     std::uint64_t remote_addr, const PostOptions& options);
    // An 8-byte atomic at remote_addr (8-byte aligned, in a region the peer
    // registered with remote atomic access); the value found there before
    // is written to result (8 bytes inside a registration of this engine)
    // before the completion. Executed exactly once: never replayed where it
    // may have executed already (policy/atomic_replay.h).
    Status post_atomic(PeerId peer, const AtomicRequest& request, void* result,
                       std::span<const std::uint8_t> remote_handle, std::uint64_t remote_addr,
                       const PostOptions& options);
    // data must stay valid until the completion.
    Status post_send(PeerId peer, const void* data, std::uint64_t length, const PostOptions& options);
    // A buffer for the next message from any peer (FIFO). A longer message
    // is truncated and completes with OutOfRange.
    Status post_recv(void* buffer, std::uint64_t length, std::uint64_t cookie);
    void set_recv_callback(RecvCallback callback);
    void set_unreachable_callback(UnreachableCallback callback);

    // Moves up to max completions to out; returns how many.
    std::size_t poll(std::vector<EngineCompletion>& out, std::size_t max);
    // Sleeps until a completion is ready to poll() or timeout has passed
    // (negative: no limit, zero: no sleep); returns how many are ready.
    std::size_t wait(std::chrono::milliseconds timeout);
    // The same, and returns early when one of `also` is readable or a
    // signal interrupts the sleep, so that a thread which also waits for
    // descriptors of its own need not leave the driving to another (whose
    // wake-up would be one more on the way). Only for an application
    // thread that may drive (caller_progress); Unsupported otherwise.
    // *ready: how many completions are ready.
    Status wait(std::chrono::milliseconds timeout, std::span<const int> also, std::size_t* ready);
    // Every rail's counters and state; what a completion the caller has
    // seen did is counted.
    std::vector<RailStats> rail_stats();
    // Counters and gauges of this engine (tent_metrics.h), for a stats
    // publisher or Prometheus text; updated by the progress thread.
    const Registry& metrics_registry() const { return metrics_registry_; }

    // RailSink (progress thread only).
    void adopt_rail(std::uint64_t connection_id, NewRail rail) override;

private:
    Engine(const Config& config, EngineParams params, std::vector<std::unique_ptr<TransportProvider>> providers);
    Status start();
    Status post_one_sided(OpType type, PeerId peer, void* local, std::uint64_t length,
                          std::span<const std::uint8_t> remote_handle, std::uint64_t remote_addr,
                          const PostOptions& options);
    Status submit(std::unique_ptr<Op> op);
    std::vector<TransportProvider*> provider_list() const;
    RailContext context_for(std::size_t provider, std::uint64_t connection_id, const wire::AddressBlob& peer) const;

    // Driving (engine_drive.cpp). Everything below that is "progress thread
    // only" belongs to the thread holding drive_mutex_.
    struct SleepSet;
    void run();
    // One turn: new connections, submitted requests, every rail, the control
    // channel, timers. True when it found work.
    bool progress_once();
    // Starts what was submitted (and adopts new connections) without
    // draining rails, so no callback runs inside a post.
    void start_submitted();
    // Through the QoS queue, so a burst is started high priority first.
    void start_ops(std::deque<std::unique_ptr<Op>>& submitted);
    // The shared slots (shared_quota_shm_path): publishes this engine's
    // pending counts when they changed, and asks the slot.
    bool slots_may_start(Priority level, TimePoint now);
    // Bytes of requests above `level` in flight on every rail.
    std::uint64_t inflight_above(Priority level) const;
    void publish_pending();
    // stats_enable: the stats segment, at most every stats_publish_interval_ms.
    void publish_stats(TimePoint now);
    // The rail table of the stats segment (metrics/process_stats.h).
    ProcessStats process_stats(TimePoint now) const;
    // Drive lock held: whether the driver may sleep now, and on what. False:
    // run another turn at once (work found, spinning, work queued).
    bool prepare_sleep(bool busy, SleepSet& sleep, int max_timeout_ms);
    // Drive lock not held: sleeps in poll() on what prepare_sleep() chose;
    // true when a signal or one of the caller's descriptors ended the sleep.
    bool sleep_for_work(SleepSet& sleep);
    bool this_thread_drives() const;
    bool on_progress_thread() const;
    // The progress thread while the application drives: accepts new
    // connections (their handshakes block) and otherwise naps until the
    // application's lease runs out.
    void accept_while_application_drives(std::chrono::nanoseconds lease);
    // How much longer the application drives (caller_progress): a whole
    // kApplicationGrace while a thread is inside wait(), else what is left
    // of it since the application last polled; zero or less: it does not,
    // and the progress thread drives.
    std::chrono::nanoseconds application_lease() const;
    // wait() on an application thread that drives while it waits.
    std::size_t wait_driving(std::chrono::milliseconds timeout, std::span<const int> also = {});
    // poll() on an application thread: one turn on it if turn_wanted (no
    // completion waits) and no other turn runs; either way the application
    // counts as driving.
    void application_poll(bool turn_wanted);
    // After a submission: start it on the calling thread unless a turn is
    // running (that turn then finds it), and wake a sleeping driver.
    void start_or_wake();
    std::size_t ready_completions();
    // After queuing work for the driver, under mutex_: writes wake_fd_ only
    // when a driver sleeps in poll() and nobody woke it yet.
    void wake_progress_locked();
    // New control connections (their handshakes) and the providers' new
    // rail sockets: on the progress thread only, as both block.
    void accept_connections();
    void sweep_early_rails(TimePoint now);  // closes the early rails past their time
    void serve_handshake(UniqueFd fd);
    // The HelloAck for a peer's AddressBlob and Hello frames, and the
    // connection it describes, not yet added (engine_connect.cpp).
    struct HandshakeReply {
        wire::Frame ack;
        std::unique_ptr<Connection> conn;
        // With the job key: the tokens the Answer gives the accepted TCP
        // rails, entered once the Proof is right (wire/auth_handshake.h).
        std::vector<wire::RailToken> rail_tokens;
    };
    // A reply without a connection answers Crossed: the pair's connection is another.
    Result<HandshakeReply> answer_hello(const wire::Frame& blob_frame, const wire::Frame& hello_frame);
    // connect() after a Crossed answer: the pair's connection once it is
    // live here, waiting no later than deadline. mutex_ held by lock.
    std::optional<PeerId> pair_connection(std::unique_lock<std::mutex>& lock, std::uint64_t engine, TimePoint deadline);
    // mutex_ held: the pair's connection with that engine, if it is live.
    std::optional<PeerId> live_pair_locked(std::uint64_t engine) const;
    // mutex_ held: by_engine_ learns conn (the first live one stays).
    void note_pair_locked(std::uint64_t engine, PeerId conn);
    // A control socket whose peer proved the job's key, with what answer_hello() made for it.
    // False when refused (its id already in use).
    bool admit_proven(UniqueFd fd, std::unique_ptr<Connection> conn);
    void attach_rail(Connection& conn, NewRail rail);
    void add_connection(std::unique_ptr<Connection> conn);
    void add_rail(Connection& conn, NewRail rail);
    void read_control(Connection& conn);
    void on_control_frame(Connection& conn, const wire::Frame& frame);
    void send_control(Connection& conn, const wire::Frame& frame);
    // Writes the control frames the socket would not take before, then reads
    // the channel (when READ); gives the peer up if a control send failed.
    void service_control(Connection& conn, bool read);
    // Whether a device event queue or a control socket has input (one
    // poll() over them all).
    bool service_input_waiting();
    void mark_unreachable(Connection& conn, const Status& why);
    // Releases the connections of departed peers (engine_release.cpp).
    void release_departed();
    // Its rails, their health records and metrics, and its control socket.
    void release_paths(Connection& conn);
    void warn_unknown_policy_devices(const Topology& topology) const;
    void start_op_by_id(std::uint64_t id);
    Status plan(Connection& conn, Op& op);
    // Marks quiet the rails that are idle and whose descriptors one poll()
    // finds unreadable: the turn does not progress them. True when every
    // rail is quiet.
    bool skip_quiet_rails(TimePoint now);
    // Requests, pieces, atomics, completions or statistics that a turn
    // moves without any rail's doing (quiet_rail_look.h, TurnLook).
    bool work_waits_for_turn() const;
    void rail_views(const Connection& conn, const std::vector<std::size_t>& rails, TimePoint now,
                    std::vector<RailView>& views) const;
    void start_planned(Connection& conn, Op& op);
    // Into allowed; false (and why) when no rail may take the request now.
    bool rails_for(const Connection& conn, const Op& op, TimePoint now, Status& why,
                   std::vector<std::size_t>& allowed) const;
    // What the transport selector knows of a request.
    TransferSpec transfer_spec(const Connection& conn, const Op& op) const;
    // admitted: the QoS window already let it through (release_held).
    void post_chunk(Op& op, std::size_t index, bool admitted = false);
    // The QoS window (policy/qos_window.h) and lane (policy/qos_lane.h).
    bool higher_priority_active(const Op& op, TimePoint now) const;
    void apply_qos_lane(Connection& conn, const Op& op, std::vector<std::size_t>& allowed, TimePoint now);
    std::uint64_t inflight_below(const RailSlot& slot, Priority level) const;
    std::uint64_t inflight_at_or_below(const RailSlot& slot, Priority level) const;
    enum class HoldReason { None, QosWindow, RailQueue };
    HoldReason hold_reason(const RailSlot& slot, Priority level, std::uint64_t length, bool higher_active) const;
    void release_held(Connection& conn, std::size_t rail);
    void on_rail_completion(Connection& conn, std::size_t rail, const RailCompletion& c);
    // Failover (engine_failover.cpp).
    bool failover_on() const { return params_.max_failover_attempts > 0; }
    bool usable(const RailSlot& slot) const;
    void piece_failed(Connection& conn, Op& op, std::size_t chunk, std::size_t rail, const Status& why,
                      FailureKind kind);
    void place_piece(Connection& conn, Op& op, std::size_t chunk, const Status& last_failure = Status::ok());
    void park(Connection& conn, Op& op, std::size_t chunk);
    void take_parked(Connection& conn, const std::function<void(Op&, const ParkedPiece&)>& each);
    void serve_parked(Connection& conn, TimePoint now);
    void fail_parked(Connection& conn, TimePoint now);
    std::string rails_report(const Connection& conn, TimePoint now) const;
    void request_sync(Connection& conn, Op& op, std::size_t chunk);
    void on_sync_reply(Connection& conn, std::uint32_t nonce, std::uint64_t last_delivered);
    void expire_syncs(Connection& conn, TimePoint now);
    // Rail care (engine_rail_care.cpp).
    void care_for_rails(Connection& conn, const std::vector<RailId>& due, TimePoint now);
    void declare_failed(Connection& conn, std::size_t rail, const std::string& why);
    // One event of the re-arm handshake (rearm_handshake.h): the transition
    // and the actions it asks for.
    void care_event(Connection& conn, std::size_t rail, const RearmEvent& event);
    void post_probe(Connection& conn, std::size_t rail);
    bool drain_rail(Connection& conn, std::size_t rail);
    void on_probe_done(Connection& conn, std::size_t rail, const RailCompletion& c);
    // A control Probe (reply: ProbeReply) about rail_id from the peer.
    void on_peer_rearm_frame(Connection& conn, std::uint16_t rail_id, std::uint32_t nonce, bool reply);
    void poll_device_events();
    void on_peer_port_state(Connection& conn, const wire::PortState& state);
    // The health layer's name of the peer (host/engine id).
    static std::string peer_name(const Connection& conn);
    void on_rail_event(const RailEvent& event) override;
    void advance(Op& op);
    bool retry_deferred();
    void finish_op(std::uint64_t op_id);
    void on_message(Connection& conn, const RailMessage& message);
    // Hands what is ready to the application; a credit goes back when one
    // is due, or anyway with credit_owed (the delivered count moved without
    // the application taking anything).
    void deliver(Connection& conn, bool credit_owed = false);
    // One whole message to the callback or the next posted buffer; false
    // when neither is there (the message waits).
    bool deliver_one(Connection& conn, std::span<const std::uint8_t> message);
    // Flow control of messages (send_flow.h): our credit to the peer, the
    // peer's credit to us, and the SENDs that waited for it.
    void grant_credit(Connection& conn);
    void on_send_credit(Connection& conn, const wire::SendCredit& credit);
    void on_send_abandoned(Connection& conn, std::uint64_t msg_seq);
    void start_credit_waiting(Connection& conn);
    // Atomics in start order (policy/atomic_order.h; engine_atomic_order.cpp).
    bool atomic_may_start_now(const Connection& conn) const;
    void start_atomics_waiting(Connection& conn);
    void replay_atomics_in_turn(Connection& conn);
    void fail_waiting_atomics(Connection& conn, const Status& why);
    void atomic_out_of_step(Connection& conn, const Op& op);
    void atomic_closed(Connection& conn, Op& op);
    void push_completion(EngineCompletion c);
    // Ends a turn: the statistics (when the turn found work, completed
    // something or marked them stale) and the turn's completions become
    // visible together, so a completion the application sees is already
    // counted in rail_stats(); an application thread's turn leaves the
    // statistics for later (rail_stats() catches up).
    void publish_turn(bool found_work, TimePoint now);
    void collect_stats();  // into spare_stats_
    // Outside a turn, publishes the statistics now; in one, at its end.
    void refresh_stats();

    const Config config_;
    const EngineParams params_;
    const Clock& clock_;
    // The [fault] knobs when any is set: add_rail wraps the rails they select.
    std::optional<FaultParams> faults_;
    std::uint64_t fault_rails_ = 0;  // rails wrapped so far: each draws its own random stream
    std::vector<std::unique_ptr<TransportProvider>> providers_;
    std::vector<std::size_t> hca_offset_, tcp_offset_;  // each provider's first blob entry
    MemoryRegistry registry_;
    Registry metrics_registry_;
    std::optional<TentMetrics> metrics_;
    wire::AddressBlob blob_;
    std::vector<std::uint8_t> blob_bytes_;
    UniqueFd listen_fd_;
    std::shared_ptr<JobKeyCell> job_key_;
    std::unique_ptr<tcp::AuthGate> control_gate_;  // accepted control sockets until they authenticate
    // Rails adopted before their connection: a rail's Proof overtook its
    // connection's (engine_connect.cpp). Bounded in count and time.
    struct EarlyRail {
        std::uint64_t connection_id;
        NewRail rail;
        TimePoint until;
    };
    static constexpr std::size_t kMaxEarlyRails = 256;
    std::vector<EarlyRail> early_rails_;
    UniqueFd wake_fd_;  // eventfd: a submission or a new connection is waiting
    UniqueFd stop_fd_;  // eventfd, written once by the destructor: ends the progress thread's nap

    // Shared with application threads, under mutex_.
    mutable std::mutex mutex_;
    std::deque<std::unique_ptr<Op>> submitted_;
    std::vector<std::unique_ptr<Connection>> connecting_;  // built by connect(), not yet adopted
    std::set<PeerId> peers_;             // every connection ever made
    std::set<PeerId> unreachable_;
    // One connection per pair of engines (connection_pairing.h), by the
    // peer's engine id: the live connection with it, this engine's dial to
    // it under way, and until when a Hello of its accepted here may still
    // prove itself. connection_known_ wakes a connect() waiting on them.
    std::map<std::uint64_t, PeerId> by_engine_;
    std::map<std::uint64_t, PeerId> dialing_;
    std::map<std::uint64_t, TimePoint> answered_;
    static constexpr std::size_t kMaxAnsweredHellos = 1024;
    std::condition_variable connection_known_;
    std::deque<EngineCompletion> completions_;
    // completions_.size(), stored under mutex_ at each change: a poll that
    // finds nothing takes no lock.
    std::atomic<std::size_t> ready_count_{0};
    // Set under mutex_ when submitted_, connecting_ or recvs_changed_ gain
    // something, cleared by the turn that takes them: an idle turn takes no
    // lock to learn there is nothing.
    std::atomic<bool> inbox_{false};
    // wait() sleeps on it; push_completion() notifies only when someone
    // waits, so a polling application costs no system call per completion.
    std::condition_variable completion_ready_;
    std::size_t completion_waiters_ = 0;
    struct PostedRecv {
        void* buffer;
        std::uint64_t length;
        std::uint64_t cookie;
    };
    std::deque<PostedRecv> recvs_;
    bool recvs_changed_ = false;
    RecvCallback recv_callback_;
    UnreachableCallback unreachable_callback_;
    std::vector<RailStats> stats_;  // refreshed by the driver
    std::vector<RailStats> spare_stats_;  // the driver's: filled, then swapped with stats_
    std::uint64_t next_op_id_ = 1;
    // Drivers sleeping in poll() (or about to): posting threads write
    // wake_fd_ only then, once until a sleeper reads it. A busy driver finds
    // new work in submitted_ without a system call.
    std::size_t sleepers_ = 0;
    bool wake_written_ = false;

    // How long the driver may go without reading its listeners, device
    // events and control sockets while it is too busy to poll() them.
    static constexpr auto kServiceInterval = std::chrono::milliseconds(1);
    // How long after an application thread's last turn the progress thread
    // stays asleep: the application is likely to call in again by then.
    // Also how often it looks while the application drives: at 2 ms those
    // 500 wake-ups a second made the scheduler move the busy threads of
    // both processes between CPUs (about 250 migrations a second against
    // 10 at 5 ms or more) and cost 9% of the 1 MiB single-rail bandwidth
    // (medians of six alternating pairs on simverbs), 4% at 64 KiB.
    static constexpr auto kApplicationGrace = std::chrono::milliseconds(5);
    // After a Crossed answer, how long connect() waits for the pair's
    // connection before it says Hello again: the peer may still hold a
    // connection of the pair that this engine gave up on and closed, until
    // it sees the close (usually within a millisecond).
    static constexpr auto kCrossedRecheck = std::chrono::milliseconds(100);

    // Held for a progress turn (and by the progress thread while it accepts
    // a connection), never while sleeping.
    std::mutex drive_mutex_;
    // Application threads inside wait() as drivers, and when one last ran a
    // turn (steady clock, ns): the progress thread keeps out of the way.
    std::atomic<int> application_drivers_{0};
    std::atomic<std::int64_t> application_turn_ns_{0};

    // The driver's only (held under drive_mutex_): the progress thread's,
    // or an application thread's during its turn.
    std::map<PeerId, std::unique_ptr<Connection>> connections_;
    // What a turn takes from submitted_ (swapped, then emptied): kept so
    // that a turn allocates no queue (a deque allocates when built).
    std::deque<std::unique_ptr<Op>> taken_;
    // plan()'s lists, kept for the next plan.
    struct PlanScratch {
        std::vector<std::size_t> allowed;
        std::vector<RailView> views;
        std::vector<std::uint64_t> max_op;
    } plan_scratch_;
    // Hashed, not ordered: a request's record is looked up several times
    // per piece, and a tree of a hundred entries walked on each (cold in
    // cache beside the data a stream moves) cost more than the rest of
    // release_held(). Ids only grow; where order matters, they are sorted.
    std::unordered_map<std::uint64_t, std::unique_ptr<Op>> ops_;
    NodeSpares<decltype(ops_)> ops_nodes_;
    OpPool op_pool_;  // post_*() take records from it, finish_op() gives them back
    struct Inflight {
        std::uint64_t op;  // 0: a probe
        std::size_t chunk;
        std::uint64_t length;
        bool watched;      // counts for the rail's silence (not a SEND)
        Priority priority;  // the op's level, for the rail's QoS window
        PeerId peer;        // whose rail: dropped when its connection is released
    };
    std::unordered_map<std::uint64_t, Inflight> inflight_;  // by rail cookie
    NodeSpares<decltype(inflight_)> inflight_nodes_;
    std::vector<RailCompletion> drain_spare_;     // drain_rail()'s reused storage
    std::uint64_t next_cookie_ = 1;
    std::deque<std::pair<std::uint64_t, std::size_t>> deferred_;  // (op, chunk) refused with Busy
    std::unique_ptr<RailMonitor> monitor_;
    std::vector<std::string> monitor_names_;  // rail name by monitor id, for metrics
    std::unique_ptr<QosQueue> qos_;
    PriorityActivity priority_activity_;  // which levels have requests in the engine
    std::unique_ptr<SharedSlots> slots_;  // nullptr: shared_quota_shm_path is empty
    std::array<std::uint32_t, kPriorityCount> published_pending_{};
    std::unique_ptr<StatsPublisher> stats_publisher_;  // nullptr: stats_enable is off
    std::optional<Topology> topology_;                    // set before start(); read-only after
    std::optional<TransportSelector> transport_selector_;  // progress thread only after start()
    bool fd_less_rails_ = false;
    TimePoint last_gauges_{};
    TimePoint last_stats_{};  // collect_stats() last ran (publish_turn may leave it for later)
    std::atomic<bool> stats_deferred_{false};  // stats_ lags completions handed out: rail_stats() refreshes
    // skip_quiet_rails()' poll set and the rail of each entry, kept between turns.
    std::vector<pollfd> quiet_fds_;
    std::vector<RailSlot*> quiet_slots_;
    std::vector<pollfd> service_fds_;  // service_input_waiting()'s, kept between turns
    // The listeners, device event queues and control sockets are read when
    // poll() found one readable, else at most every kServiceInterval, and
    // then only when one poll() over them finds input: on a busy loop each
    // read would be a failing system call.
    std::atomic<bool> service_due_{true};
    TimePoint last_service_{};
    TimePoint last_monitor_tick_{};
    TimePoint last_care_{};  // rail care and timers last ran (quiet_rail_look.h, kCareInterval)
    TimePoint last_busy_{};  // last turn that found work (progress_spin)
    TimePoint turn_clock_{};  // the last turn's last reading of the clock (its start, or its end after work)
    // What the deadlines judging a peer run on (watched_time.h); a running
    // driver turns at least every kLongestSleepMs (100 ms): a longer step
    // counts as that.
    static constexpr auto kWatchStep = std::chrono::milliseconds(100);
    WatchedTime watched_{kWatchStep, clock_.now()};
    bool stats_stale_ = false;  // stats_ lags: requests started outside a turn, or a turn handed completions first
    // Completions found during the running turn, published by publish_turn().
    bool in_turn_ = false;
    std::vector<EngineCompletion> turn_completions_;

    std::atomic<bool> stop_{false};
    std::thread thread_;
};

} // namespace tent
