// The C API (include/tent/tent.h) over tent::Engine. Every entry point
// catches every exception and turns it into a status: nothing C++ crosses
// the C boundary.
#include "tent/tent.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>

#include "common/log.h"
#include "config/config.h"
#include "config/log_setup.h"
#include "engine/default_providers.h"
#include "engine/engine.h"
#include "engine/job_key.h"
#include "metrics/prometheus_text.h"
#include "wire/memory_handle.h"
#include "capi/create_engine.h"

struct tent_peer {
    tent_engine* engine = nullptr;
    tent::PeerId id = 0;
};

struct tent_engine {
    std::unique_ptr<tent::Engine> engine;
    std::mutex mutex;
    std::map<tent::PeerId, std::unique_ptr<tent_peer>> peers;
    tent_recv_cb recv_cb = nullptr;
    void* recv_arg = nullptr;
    tent_peer_unreachable_cb unreachable_cb = nullptr;
    void* unreachable_arg = nullptr;

    tent_peer* peer(tent::PeerId id) {
        std::lock_guard lock(mutex);
        auto& p = peers[id];
        if (!p) p.reset(new tent_peer{this, id});
        return p.get();
    }
};

struct tent_mem {
    tent_engine* engine = nullptr;
    std::shared_ptr<const tent::Registration> registration;
    std::array<std::uint8_t, tent::wire::kMemoryHandleSize> key{};
};

static_assert(tent::wire::kMemoryHandleSize == TENT_REMOTE_KEY_SIZE, "remote key size out of sync with the wire");

namespace {

int status_of(tent::Code code) {
    using tent::Code;
    switch (code) {
    case Code::Ok: return TENT_OK;
    case Code::InvalidArgument: return TENT_ERR_INVALID;
    case Code::OutOfRange: return TENT_ERR_OUT_OF_RANGE;
    case Code::NotFound: return TENT_ERR_NOT_FOUND;
    case Code::AlreadyExists: return TENT_ERR_INVALID;
    case Code::Unsupported: return TENT_ERR_UNSUPPORTED;
    case Code::Busy: return TENT_ERR_BUSY;
    case Code::Timeout: return TENT_ERR_TIMEOUT;
    case Code::NoResources: return TENT_ERR_NO_RESOURCES;
    case Code::RailDown:
    case Code::TransportError: return TENT_ERR_RAIL;
    case Code::RemoteAccess: return TENT_ERR_REMOTE_ACCESS;
    case Code::PeerUnreachable:
    case Code::FailoverExhausted: return TENT_ERR_PEER_UNREACHABLE;
    case Code::SystemError: return TENT_ERR_SYSTEM;
    case Code::Internal: return TENT_ERR_INTERNAL;
    }
    return TENT_ERR_INTERNAL;
}

int status_of(const tent::Status& s) {
    if (!s.is_ok()) TENT_DEBUG("capi-error", "%s", s.to_string().c_str());
    return status_of(s.code());
}

// Runs body, turning any exception into a status.
template <typename F>
int guarded(F&& body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return TENT_ERR_NO_RESOURCES;
    } catch (const std::exception& e) {
        TENT_ERROR("capi-exception", "internal error: %s", e.what());
        return TENT_ERR_INTERNAL;
    } catch (...) {
        TENT_ERROR("capi-exception", "internal error: unknown exception");
        return TENT_ERR_INTERNAL;
    }
}

tent::PostOptions options(int priority, int hint, std::uint64_t cookie, bool& ok) {
    tent::PostOptions o;
    o.cookie = cookie;
    ok = priority >= TENT_PRIORITY_HIGH && priority <= TENT_PRIORITY_LOW && hint >= TENT_TRANSPORT_ANY &&
         hint <= TENT_TRANSPORT_TCP;
    o.priority = static_cast<tent::Priority>(priority);
    if (hint != TENT_TRANSPORT_ANY) o.hint = static_cast<tent::TransportKind>(hint);
    return o;
}

} // namespace

namespace tent::capi {

int create_engine(const LoadOptions& lo, tent_engine_t** out, std::string* error) {
    return guarded([&]() -> int {
        tent::LoadResult loaded = tent::load_config(lo);
        if (!loaded.ok()) {
            if (error) *error = loaded.error_text();
            else TENT_ERROR("config-invalid", "%s", loaded.error_text().c_str());
            return TENT_ERR_INVALID;
        }
        (void)tent::configure_logging(loaded.config);
        auto providers = tent::make_default_providers(loaded.config);
        if (!providers) {
            if (error) *error = providers.status().to_string();
            TENT_ERROR("engine-create-failed", "%s", providers.status().to_string().c_str());
            return status_of(providers.status());
        }
        auto engine = tent::Engine::create(loaded.config, std::move(*providers));
        if (!engine) {
            if (error) *error = engine.status().to_string();
            TENT_ERROR("engine-create-failed", "%s", engine.status().to_string().c_str());
            return status_of(engine.status());
        }
        auto handle = std::make_unique<tent_engine>();
        handle->engine = std::move(*engine);
        *out = handle.release();
        return TENT_OK;
    });
}

} // namespace tent::capi

extern "C" {

int tent_engine_create(const char* config_path, tent_engine_t** out) {
    return guarded([&]() -> int {
        if (!out) return TENT_ERR_INVALID;
        *out = nullptr;
        tent::LoadOptions lo;
        if (config_path) lo.files.push_back(config_path);
        return tent::capi::create_engine(lo, out, nullptr);
    });
}

int tent_engine_destroy(tent_engine_t* engine) {
    return guarded([&]() -> int {
        if (!engine) return TENT_ERR_INVALID;
        // The progress thread stops before the peer handles its callbacks use
        // go away. Its last callbacks may post through this handle (the
        // interposer answers a message for a queue pair already destroyed):
        // the handle points at the engine until the engine's destructor has
        // returned, which reset() would not keep (it clears the pointer first).
        std::unique_ptr<tent::Engine>& doomed = engine->engine;
        doomed.get_deleter()(doomed.get());
        (void)doomed.release();
        delete engine;
        return TENT_OK;
    });
}

int tent_engine_address(tent_engine_t* engine, const void** blob, size_t* length) {
    return guarded([&]() -> int {
        if (!engine || !blob || !length) return TENT_ERR_INVALID;
        *blob = engine->engine->address().data();
        *length = engine->engine->address().size();
        return TENT_OK;
    });
}

int tent_engine_set_job_key(tent_engine_t* engine, const void* key, size_t length) {
    return guarded([&]() -> int {
        if (!engine || !key || length < tent::kMinJobKeyLength || !engine->engine->job_key_required())
            return TENT_ERR_INVALID;
        const auto* bytes = static_cast<const std::uint8_t*>(key);
        engine->engine->set_job_key(tent::JobKey(bytes, bytes + length));
        return TENT_OK;
    });
}

int tent_mem_register(tent_engine_t* engine, void* addr, size_t length, unsigned access, tent_mem_t** mem) {
    return guarded([&]() -> int {
        if (!engine || !mem || (access & ~(TENT_ACCESS_ALL | TENT_ACCESS_REMOTE_ATOMIC))) return TENT_ERR_INVALID;
        *mem = nullptr;
        auto reg = engine->engine->register_memory(addr, length, static_cast<std::uint16_t>(access));
        if (!reg) return status_of(reg.status());
        auto key = tent::wire::encode_memory_handle((*reg)->handle);
        if (!key) {
            (void)engine->engine->deregister_memory((*reg)->id);
            return status_of(key.status());
        }
        auto m = std::make_unique<tent_mem>();
        m->engine = engine;
        m->registration = std::move(*reg);
        m->key = *key;
        *mem = m.release();
        return TENT_OK;
    });
}

int tent_mem_deregister(tent_mem_t* mem) {
    return guarded([&]() -> int {
        if (!mem) return TENT_ERR_INVALID;
        std::unique_ptr<tent_mem> owned(mem);
        return status_of(owned->engine->engine->deregister_memory(owned->registration->id));
    });
}

int tent_mem_remote_key(tent_mem_t* mem, const void** key, size_t* length) {
    return guarded([&]() -> int {
        if (!mem || !key || !length) return TENT_ERR_INVALID;
        *key = mem->key.data();
        *length = mem->key.size();
        return TENT_OK;
    });
}

int tent_connect(tent_engine_t* engine, const void* blob, size_t length, tent_peer_t** peer) {
    return guarded([&]() -> int {
        if (!engine || !blob || !peer) return TENT_ERR_INVALID;
        *peer = nullptr;
        auto id = engine->engine->connect({static_cast<const std::uint8_t*>(blob), length});
        if (!id) return status_of(id.status());
        *peer = engine->peer(*id);
        return TENT_OK;
    });
}

int tent_set_peer_unreachable_callback(tent_engine_t* engine, tent_peer_unreachable_cb cb, void* arg) {
    return guarded([&]() -> int {
        if (!engine) return TENT_ERR_INVALID;
        if (!cb) {
            engine->engine->set_unreachable_callback(nullptr);
            return TENT_OK;
        }
        engine->engine->set_unreachable_callback([engine, cb, arg](tent::PeerId id, const tent::Status& why) {
            guarded([&]() -> int {
                cb(engine->peer(id), status_of(why.code()), arg);
                return TENT_OK;
            });
        });
        return TENT_OK;
    });
}

int tent_post_write(tent_peer_t* peer, const void* local, size_t length, const void* remote_key,
                    size_t remote_key_length, uint64_t remote_addr, tent_priority_t priority, tent_transport_t hint,
                    uint64_t cookie) {
    return guarded([&]() -> int {
        bool ok = false;
        auto o = options(priority, hint, cookie, ok);
        if (!peer || !remote_key || !ok) return TENT_ERR_INVALID;
        return status_of(peer->engine->engine->post_write(
            peer->id, const_cast<void*>(local), length,
            {static_cast<const std::uint8_t*>(remote_key), remote_key_length}, remote_addr, o));
    });
}

int tent_post_read(tent_peer_t* peer, void* local, size_t length, const void* remote_key, size_t remote_key_length,
                   uint64_t remote_addr, tent_priority_t priority, tent_transport_t hint, uint64_t cookie) {
    return guarded([&]() -> int {
        bool ok = false;
        auto o = options(priority, hint, cookie, ok);
        if (!peer || !remote_key || !ok) return TENT_ERR_INVALID;
        return status_of(peer->engine->engine->post_read(
            peer->id, local, length, {static_cast<const std::uint8_t*>(remote_key), remote_key_length}, remote_addr,
            o));
    });
}

int tent_post_atomic(tent_peer_t* peer, tent_atomic_op_t op, uint64_t compare_add, uint64_t swap, void* result,
                     const void* remote_key, size_t remote_key_length, uint64_t remote_addr, tent_priority_t priority,
                     tent_transport_t hint, uint64_t cookie) {
    return guarded([&]() -> int {
        bool ok = false;
        auto o = options(priority, hint, cookie, ok);
        if (!peer || !remote_key || !ok) return TENT_ERR_INVALID;
        if (op != TENT_ATOMIC_FETCH_ADD && op != TENT_ATOMIC_COMPARE_SWAP) return TENT_ERR_INVALID;
        tent::AtomicRequest request;
        request.kind = op == TENT_ATOMIC_COMPARE_SWAP ? tent::AtomicKind::CompareSwap : tent::AtomicKind::FetchAdd;
        request.compare_add = compare_add;
        request.swap = op == TENT_ATOMIC_COMPARE_SWAP ? swap : 0;
        return status_of(peer->engine->engine->post_atomic(
            peer->id, request, result, {static_cast<const std::uint8_t*>(remote_key), remote_key_length},
            remote_addr, o));
    });
}

int tent_post_send(tent_peer_t* peer, const void* data, size_t length, tent_priority_t priority,
                   tent_transport_t hint, uint64_t cookie) {
    return guarded([&]() -> int {
        bool ok = false;
        auto o = options(priority, hint, cookie, ok);
        if (!peer || !ok) return TENT_ERR_INVALID;
        return status_of(peer->engine->engine->post_send(peer->id, data, length, o));
    });
}

int tent_post_recv(tent_engine_t* engine, void* buffer, size_t length, uint64_t cookie) {
    return guarded([&]() -> int {
        if (!engine) return TENT_ERR_INVALID;
        return status_of(engine->engine->post_recv(buffer, length, cookie));
    });
}

int tent_set_recv_callback(tent_engine_t* engine, tent_recv_cb cb, void* arg) {
    return guarded([&]() -> int {
        if (!engine) return TENT_ERR_INVALID;
        if (!cb) {
            engine->engine->set_recv_callback(nullptr);
            return TENT_OK;
        }
        engine->engine->set_recv_callback([engine, cb, arg](tent::PeerId id, std::span<const std::uint8_t> m) {
            guarded([&]() -> int {
                cb(engine->peer(id), m.data(), m.size(), arg);
                return TENT_OK;
            });
        });
        return TENT_OK;
    });
}

int tent_poll(tent_engine_t* engine, tent_completion_t* out, int max) {
    return guarded([&]() -> int {
        if (!engine || max < 0 || (max > 0 && !out)) return TENT_ERR_INVALID;
        // The calling thread's, kept: a poll loop allocates nothing per completion.
        static thread_local std::vector<tent::EngineCompletion> done;
        done.clear();
        engine->engine->poll(done, static_cast<std::size_t>(max));
        tent_peer_t* peer = nullptr;  // completions come in runs of one peer: one lookup per run
        for (std::size_t i = 0; i < done.size(); ++i) {
            out[i].cookie = done[i].cookie;
            out[i].op = static_cast<tent_op_t>(done[i].op);
            out[i].status = status_of(done[i].status.code());
            out[i].length = done[i].length;
            if (!peer || peer->id != done[i].peer) peer = engine->peer(done[i].peer);
            out[i].peer = peer;
        }
        return static_cast<int>(done.size());
    });
}

int tent_wait(tent_engine_t* engine, int timeout_ms) {
    return guarded([&]() -> int {
        if (!engine) return TENT_ERR_INVALID;
        std::size_t ready = engine->engine->wait(std::chrono::milliseconds(timeout_ms));
        return static_cast<int>(std::min<std::size_t>(ready, INT_MAX));
    });
}

int tent_wait_fds(tent_engine_t* engine, int timeout_ms, const int* fds, int nfds) {
    return guarded([&]() -> int {
        if (!engine || nfds < 0 || (nfds > 0 && !fds)) return TENT_ERR_INVALID;
        for (int i = 0; i < nfds; ++i)
            if (fds[i] < 0) return TENT_ERR_INVALID;
        std::size_t ready = 0;
        tent::Status s = engine->engine->wait(std::chrono::milliseconds(timeout_ms),
                                              std::span<const int>(fds, static_cast<std::size_t>(nfds)), &ready);
        if (!s) return status_of(s.code());
        return static_cast<int>(std::min<std::size_t>(ready, INT_MAX));
    });
}

int tent_rail_stats(tent_engine_t* engine, tent_rail_stats_t* out, int max) {
    return guarded([&]() -> int {
        if (!engine || max < 0 || (max > 0 && !out)) return TENT_ERR_INVALID;
        auto stats = engine->engine->rail_stats();
        for (std::size_t i = 0; i < stats.size() && i < static_cast<std::size_t>(max); ++i) {
            tent_rail_stats_t& s = out[i];
            std::memset(&s, 0, sizeof s);
            s.peer = engine->peer(stats[i].peer);
            s.rail_id = stats[i].rail_id;
            std::strncpy(s.name, stats[i].name.c_str(), sizeof s.name - 1);
            s.transport = stats[i].kind == tent::TransportKind::Rdma ? TENT_TRANSPORT_RDMA : TENT_TRANSPORT_TCP;
            s.state = static_cast<int>(stats[i].state);
            s.ops = stats[i].ops;
            s.bytes = stats[i].bytes;
            s.errors = stats[i].errors;
            s.inflight_bytes = stats[i].inflight_bytes;
            s.failovers = stats[i].failovers;
        }
        return static_cast<int>(stats.size());
    });
}

int tent_metrics_text(tent_engine_t* engine, char* buf, size_t size) {
    return guarded([&]() -> int {
        if (!engine || (size > 0 && !buf)) return TENT_ERR_INVALID;
        const std::string text = tent::render_prometheus(engine->engine->metrics_registry().snapshot());
        if (text.size() > static_cast<std::size_t>(INT_MAX)) return TENT_ERR_NO_RESOURCES;
        if (size > 0) {
            const std::size_t n = std::min(text.size(), size - 1);
            std::memcpy(buf, text.data(), n);
            buf[n] = '\0';
        }
        return static_cast<int>(text.size());
    });
}

const char* tent_strerror(int status) {
    switch (status) {
    case TENT_OK: return "success";
    case TENT_ERR_INVALID: return "invalid argument";
    case TENT_ERR_OUT_OF_RANGE: return "out of range (message truncated)";
    case TENT_ERR_NOT_FOUND: return "not found";
    case TENT_ERR_UNSUPPORTED: return "not supported";
    case TENT_ERR_BUSY: return "busy, retry later";
    case TENT_ERR_TIMEOUT: return "timed out";
    case TENT_ERR_NO_RESOURCES: return "no resources (no usable rail or out of memory)";
    case TENT_ERR_RAIL: return "rail failure";
    case TENT_ERR_REMOTE_ACCESS: return "remote access refused (key, bounds or access rights)";
    case TENT_ERR_PEER_UNREACHABLE: return "peer unreachable";
    case TENT_ERR_SYSTEM: return "system call failed";
    case TENT_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

} // extern "C"
