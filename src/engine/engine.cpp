// Engine construction, teardown and the public (application-thread) calls.
#include "engine/engine.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cctype>
#include <random>
#include <thread>

#include "common/crash_reporter.h"
#include "common/log.h"
#include "common/signal_free_thread.h"
#include "config/log_setup.h"
#include "engine/connection.h"
#include "engine/job_key.h"
#include "transport/tcp/control_socket.h"
#include "engine/op.h"
#include "health/rail_monitor.h"
#include "metrics/stats_publisher.h"
#include "policy/qos_queue.h"
#include "policy/shared_slots.h"
#include "wire/frame_codec.h"

namespace tent {

namespace {

std::uint64_t random_nonzero() {
    std::random_device rd;
    std::uint64_t v = 0;
    while (v == 0) v = (std::uint64_t{rd()} << 32) ^ rd();
    return v;
}

std::string local_hostname() {
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0) return "localhost";
    std::string h;
    for (char* p = host; *p && h.size() < wire::kMaxHostnameLength; ++p)
        if (std::isprint(static_cast<unsigned char>(*p))) h += *p;
    return h.empty() ? "localhost" : h;
}

} // namespace

Engine::Engine(const Config& config, EngineParams params, std::vector<std::unique_ptr<TransportProvider>> providers)
    : config_(config), params_(std::move(params)), clock_(SteadyClock::instance()), providers_(std::move(providers)) {}

Result<std::unique_ptr<Engine>> Engine::create(const Config& config,
                                               std::vector<std::unique_ptr<TransportProvider>> providers) {
    auto topology = Topology::load(config);
    if (!topology) return topology.status();
    return create(config, std::move(providers), std::move(*topology));
}

Result<std::unique_ptr<Engine>> Engine::create(const Config& config,
                                               std::vector<std::unique_ptr<TransportProvider>> providers,
                                               Topology topology) {
    if (Status s = configure_logging(config); !s) return s;
    // A missing backtrace is no reason to refuse the data path.
    if (Status s = maybe_install_crash_reporter(config); !s)
        TENT_WARN("crash-reporter-failed", "%s", s.to_string().c_str());
    auto rules = compile_rules(config.policies(), topology);
    if (!rules) return rules.status();
    auto monitor_params = RailMonitorParams::from_config(config);
    if (!monitor_params) return monitor_params.status();
    auto job_key = load_job_key(config);
    if (!job_key) return job_key.status();
    std::unique_ptr<Engine> engine(new Engine(config, EngineParams::from_config(config), std::move(providers)));
    engine->job_key_ = std::move(*job_key);
    engine->monitor_ = std::make_unique<RailMonitor>(*monitor_params);
    engine->monitor_->set_observer(engine.get());
    // Which rails a rule allows is decided per rail
    // (CompiledRule::allows_device), by name for HCAs hwloc misses.
    engine->transport_selector_.emplace(std::move(*rules));
    for (std::size_t k = 0; k < kTransportKindCount; ++k) {
        bool present = false;
        for (const auto& p : engine->providers_) present = present || static_cast<std::size_t>(p->kind()) == k;
        engine->transport_selector_->set_available(static_cast<TransportKind>(k), present);
    }
    engine->warn_unknown_policy_devices(topology);
    if (FaultParams faults = FaultParams::from_config(config); faults.enabled()) {
        TENT_WARN("fault injection on", "rails will fail on purpose: %s", faults.describe().c_str());
        engine->faults_.emplace(std::move(faults));
    }
    engine->topology_.emplace(std::move(topology));
    engine->qos_ = std::make_unique<QosQueue>(QosParams::from_config(config), engine->clock_);
    auto slots = SharedSlots::from_config(config, engine->clock_);
    if (!slots) return slots.status();
    engine->slots_ = std::move(*slots);
    auto metrics = TentMetrics::create(engine->metrics_registry_);
    if (!metrics) return metrics.status();
    engine->metrics_.emplace(std::move(*metrics));
    // Like a missing backtrace, a missing stats segment is no reason to
    // refuse the data path. A second engine of a process finds the name
    // taken by the first: normal (stats are on by default), so not a warning.
    if (auto stats = StatsPublisher::from_config(config, engine->metrics_registry_,
                                                  [e = engine.get()](TimePoint now) { return e->process_stats(now); });
        stats)
        engine->stats_publisher_ = std::move(*stats);
    else if (stats.status().code() == Code::AlreadyExists)
        TENT_INFO("stats-segment-failed", "%s; this engine publishes no stats", stats.status().to_string().c_str());
    else
        TENT_WARN("stats-segment-failed", "%s; this engine publishes no stats", stats.status().to_string().c_str());
    if (Status s = engine->start(); !s) return s;
    return engine;
}

// A rule naming an HCA that neither hwloc nor the transports know matches
// nothing here: said once, at creation (a typo, or a file shared by hosts
// with different HCAs).
void Engine::warn_unknown_policy_devices(const Topology& topology) const {
    std::vector<std::string> opened;
    for (const auto& p : providers_)
        for (auto& name : p->device_names()) opened.push_back(std::move(name));
    for (const CompiledRule& rule : transport_selector_->rules())
        for (const auto& name : unknown_devices(rule, topology, opened))
            TENT_WARN("policy unknown device", "%s: [policy %s] devices: this host has no HCA '%s'; it matches nothing",
                      rule.devices_origin.c_str(), rule.name.c_str(), name.c_str());
}

Status Engine::start() {
    auto control = resolve_control_address(params_.control_address);
    if (!control) return control.status();
    wire::TcpAddress addr = *control;
    auto listener = listen_control(addr);
    if (!listener) return listener.status();
    listen_fd_ = std::move(*listener);
    // A greeting brings the peer's AddressBlob and Hello; the HelloAck
    // answers them, the connection waits for the peer's Proof.
    auto gate = tcp::AuthGate::create(
        job_key_, params_.connect_timeout, "control", 2,
        [this](int, const std::vector<std::span<const std::uint8_t>>& frames) -> Result<tcp::AuthGate::Reply> {
            auto blob = wire::decode_frame(frames[0]);
            if (!blob) return blob.status();
            auto hello = wire::decode_frame(frames[1]);
            if (!hello) return hello.status();
            auto reply = answer_hello(*blob, *hello);
            if (!reply) return reply.status();
            auto bytes = wire::encode_frame(reply->ack);
            if (!bytes) return bytes.status();
            // The accepted TCP rails open with one-time tokens instead of a
            // challenge-response each (tent(7), SECURITY).
            std::vector<std::uint16_t> tcp_rails;
            for (const auto& r : std::get<wire::HelloAck>(reply->ack.body).rails)
                if (r.kind == wire::RailKind::Tcp) tcp_rails.push_back(r.rail_id);
            auto tokens = tcp::draw_rail_tokens(tcp_rails);
            if (!tokens) return tokens.status();
            reply->rail_tokens = *tokens;
            tcp::AuthGate::Reply out;
            out.bytes = std::move(*bytes);
            out.held = std::make_shared<HandshakeReply>(std::move(*reply));
            out.rail_tokens = std::move(*tokens);
            return out;
        });
    if (!gate) return gate.status();
    control_gate_ = std::move(*gate);
    wake_fd_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!wake_fd_) return Status::from_errno(errno, "eventfd");
    stop_fd_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!stop_fd_) return Status::from_errno(errno, "eventfd");

    blob_.engine_id = random_nonzero();
    blob_.hostname = local_hostname();
    blob_.tcp.push_back(addr);  // entry 0: the control listener
    for (auto& p : providers_) {
        p->use_job_key(job_key_);
        if (Status s = p->install(registry_); !s) return s;
        hca_offset_.push_back(blob_.hcas.size());
        tcp_offset_.push_back(blob_.tcp.size());
        p->describe(blob_);
    }
    wire::Frame frame{0, 0, 0, 0, blob_};
    auto bytes = wire::encode_frame(frame);
    if (!bytes) return bytes.status();
    blob_bytes_ = std::move(*bytes);
    thread_ = signal_free_thread([this] { run(); });
    TENT_DEBUG("engine-start", "engine %016llx listening on %s", static_cast<unsigned long long>(blob_.engine_id),
               tcp_address_text(addr).c_str());
    return Status::ok();
}

Engine::~Engine() {
    stop_ = true;
    std::uint64_t one = 1;
    if (wake_fd_) (void)!::write(wake_fd_.get(), &one, sizeof one);  // a driver asleep on the rails
    if (stop_fd_) (void)!::write(stop_fd_.get(), &one, sizeof one);  // the progress thread's nap
    if (thread_.joinable()) thread_.join();
    // Each peer learns what this engine did for it before it learns that
    // this engine is gone (best effort: a socket without room now, or a
    // control channel with frames still waiting for room, gets nothing
    // more): the acknowledgements the rails hold (a write applied here is
    // then confirmed, not reported lost with the rest) and which of its
    // messages arrived here.
    for (auto& [id, conn] : connections_) {
        for (auto& slot : conn->rails)
            if (slot.rail.rail) slot.rail.rail->send_queued();
        grant_credit(*conn);  // "delivered up to here"
        send_control(*conn, wire::Frame{0, 0, conn->id, 0, wire::Goodbye{}});
    }
    // Rails go before the providers that made them.
    connections_.clear();
    connecting_.clear();
}

void Engine::set_job_key(JobKey key) {
    job_key_->set(std::move(key));
    // Handshakes that waited for the key go on at the next service.
    service_due_ = true;
    std::lock_guard lock(mutex_);
    wake_progress_locked();
}

std::vector<TransportProvider*> Engine::provider_list() const {
    std::vector<TransportProvider*> out;
    for (const auto& p : providers_) out.push_back(p.get());
    return out;
}

Result<std::shared_ptr<const Registration>> Engine::register_memory(void* addr, std::uint64_t length,
                                                                    std::uint16_t access) {
    return registry_.add(addr, length, access, provider_list());
}

Status Engine::deregister_memory(std::uint64_t registration_id) {
    return registry_.remove(registration_id, provider_list());
}

Status Engine::post_one_sided(OpType type, PeerId peer, void* local, std::uint64_t length,
                              std::span<const std::uint8_t> remote_handle, std::uint64_t remote_addr,
                              const PostOptions& options) {
    // Decoded into a pooled record's handle, whose key list is kept.
    auto op = op_pool_.take();
    Status status = wire::decode_memory_handle(remote_handle, op->remote);
    if (status && length > 0 && local == nullptr) status = Status(Code::InvalidArgument, "null local buffer");
    if (status && length > 0 && !registry_.find_local(local, length))
        status = Status(Code::InvalidArgument, "local buffer is not inside a registered region");
    if (!status) {
        op_pool_.give_back(std::move(op));
        return status;
    }
    op->type = type;
    op->peer = peer;
    op->options = options;
    op->local = static_cast<std::uint8_t*>(local);
    op->length = length;
    op->remote_addr = remote_addr;
    op->caller_numa = topology_->calling_thread_numa_node();
    return submit(std::move(op));
}

Status Engine::post_write(PeerId peer, void* local, std::uint64_t length, std::span<const std::uint8_t> remote_handle,
                          std::uint64_t remote_addr, const PostOptions& options) {
    return post_one_sided(OpType::Write, peer, local, length, remote_handle, remote_addr, options);
}

Status Engine::post_read(PeerId peer, void* local, std::uint64_t length, std::span<const std::uint8_t> remote_handle,
                         std::uint64_t remote_addr, const PostOptions& options) {
    return post_one_sided(OpType::Read, peer, local, length, remote_handle, remote_addr, options);
}

Status Engine::post_atomic(PeerId peer, const AtomicRequest& request, void* result,
                           std::span<const std::uint8_t> remote_handle, std::uint64_t remote_addr,
                           const PostOptions& options) {
    if (remote_addr % 8 != 0)
        return Status(Code::InvalidArgument, "atomic at remote address " + std::to_string(remote_addr) +
                                                 ": not 8-byte aligned");
    if (request.kind != AtomicKind::FetchAdd && request.kind != AtomicKind::CompareSwap)
        return Status(Code::InvalidArgument, "unknown atomic operation");
    if (result == nullptr) return Status(Code::InvalidArgument, "null atomic result buffer");
    auto op = op_pool_.take();
    Status status = wire::decode_memory_handle(remote_handle, op->remote);
    if (status && !registry_.find_local(result, 8))
        status = Status(Code::InvalidArgument, "atomic result buffer is not inside a registered region");
    if (!status) {
        op_pool_.give_back(std::move(op));
        return status;
    }
    op->type = OpType::Atomic;
    op->peer = peer;
    op->options = options;
    op->local = static_cast<std::uint8_t*>(result);
    op->length = 8;
    op->remote_addr = remote_addr;
    op->atomic = request;
    op->caller_numa = topology_->calling_thread_numa_node();
    return submit(std::move(op));
}

Status Engine::post_send(PeerId peer, const void* data, std::uint64_t length, const PostOptions& options) {
    if (length > 0 && data == nullptr) return Status(Code::InvalidArgument, "null send buffer");
    auto op = op_pool_.take();
    op->type = OpType::Send;
    op->peer = peer;
    op->options = options;
    // The rail only reads from it; Op keeps one pointer type for all kinds.
    op->local = static_cast<std::uint8_t*>(const_cast<void*>(data));
    op->length = length;
    op->caller_numa = topology_->calling_thread_numa_node();
    return submit(std::move(op));
}

Status Engine::submit(std::unique_ptr<Op> op) {
    // A callback on the progress thread may post while the destructor waits
    // for that thread: nothing would carry the request any more.
    if (stop_.load()) return Status(Code::PeerUnreachable, "the engine is being destroyed");
    {
        std::lock_guard lock(mutex_);
        // A departed peer's connection is released (engine_release.cpp): its id stays in unreachable_ only.
        if (unreachable_.count(op->peer)) return Status(Code::PeerUnreachable, "peer is unreachable");
        if (!peers_.count(op->peer)) return Status(Code::NotFound, "unknown peer");
        op->id = next_op_id_++;
        submitted_.push_back(std::move(op));
        inbox_.store(true, std::memory_order_release);
    }
    start_or_wake();
    return Status::ok();
}

Status Engine::post_recv(void* buffer, std::uint64_t length, std::uint64_t cookie) {
    if (length > 0 && buffer == nullptr) return Status(Code::InvalidArgument, "null receive buffer");
    {
        std::lock_guard lock(mutex_);
        recvs_.push_back({buffer, length, cookie});
        recvs_changed_ = true;
        inbox_.store(true, std::memory_order_release);
        wake_progress_locked();
    }
    return Status::ok();
}

void Engine::set_recv_callback(RecvCallback callback) {
    std::lock_guard lock(mutex_);
    recv_callback_ = std::move(callback);
    recvs_changed_ = true;
    inbox_.store(true, std::memory_order_release);
    wake_progress_locked();
}

void Engine::set_unreachable_callback(UnreachableCallback callback) {
    std::lock_guard lock(mutex_);
    unreachable_callback_ = std::move(callback);
}

std::size_t Engine::poll(std::vector<EngineCompletion>& out, std::size_t max) {
    // Completions already queued are returned without a turn: the caller
    // takes them (and posts more) sooner, and calls again when none is left.
    if (params_.caller_progress && !this_thread_drives()) application_poll(ready_completions() == 0);
    if (ready_completions() == 0) {
        // Only the progress thread drives: a caller polling in a loop
        // gives it the CPU it may be waiting for. Else, with more threads
        // spinning than cores (a poller and a progress thread per process,
        // two processes, two cores), each step waited for a time slice:
        // ib_send_lat under tent-run took 2 ms a round trip.
        if (!params_.caller_progress && !this_thread_drives()) std::this_thread::yield();
        return 0;  // no lock for a poll that finds nothing
    }
    std::lock_guard lock(mutex_);
    out.reserve(out.size() + std::min(max, completions_.size()));  // one allocation, not one per doubling
    std::size_t n = 0;
    while (n < max && !completions_.empty()) {
        out.push_back(std::move(completions_.front()));
        completions_.pop_front();
        ++n;
    }
    ready_count_.store(completions_.size(), std::memory_order_release);
    return n;
}

std::size_t Engine::wait(std::chrono::milliseconds timeout) {
    if (params_.caller_progress && timeout != std::chrono::milliseconds::zero() && !this_thread_drives())
        return wait_driving(timeout);
    std::unique_lock lock(mutex_);
    if (completions_.empty() && timeout != std::chrono::milliseconds::zero()) {
        ++completion_waiters_;
        auto ready = [this] { return !completions_.empty(); };
        if (timeout < std::chrono::milliseconds::zero())
            completion_ready_.wait(lock, ready);
        else
            completion_ready_.wait_for(lock, timeout, ready);
        --completion_waiters_;
    }
    return completions_.size();
}

Status Engine::wait(std::chrono::milliseconds timeout, std::span<const int> also, std::size_t* ready) {
    // Only a thread that drives while it waits can watch descriptors as it
    // sleeps; one that waits for the progress thread sleeps on a condition.
    if (!params_.caller_progress || this_thread_drives())
        return Status(Code::Unsupported, "waiting on descriptors needs caller_progress and a thread that is not "
                                         "inside a turn");
    *ready = timeout == std::chrono::milliseconds::zero() ? ready_completions() : wait_driving(timeout, also);
    return Status::ok();
}

void Engine::push_completion(EngineCompletion c) {
    if (in_turn_) {
        turn_completions_.push_back(std::move(c));
        return;
    }
    bool waiters;
    {
        std::lock_guard lock(mutex_);
        completions_.push_back(std::move(c));
        ready_count_.store(completions_.size(), std::memory_order_release);
        waiters = completion_waiters_ > 0;
    }
    if (waiters) completion_ready_.notify_all();
}

} // namespace tent
