#include "memory.h"

#include <cstring>
#include <map>
#include <mutex>

#include "activation.h"
#include "common/log.h"
#include "context_table.h"
#include "real_verbs.h"
#include "runtime.h"

namespace tent::interpose {

namespace {

struct Region {
    ibv_context* context = nullptr;
    std::uint8_t* addr = nullptr;
    std::uint64_t iova = 0;
    std::uint64_t length = 0;
    int access = 0;
    std::uint32_t lkey = 0;
    std::uint32_t rkey = 0;
    tent_mem_t* mem = nullptr;
};

std::mutex g_mu;
std::map<const ibv_mr*, Region>& regions() {
    static auto* r = new std::map<const ibv_mr*, Region>;  // used until exit, never freed
    return *r;
}

// Registers R with tent once; false if tent refused it.
bool ensure_registered(Region& r, tent_engine_t* engine) {
    if (r.mem) return true;
    if (!engine) return false;
    TentScope scope;
    // Remote atomics only where the program allowed them, as an HCA checks.
    const unsigned access = TENT_ACCESS_ALL | ((r.access & IBV_ACCESS_REMOTE_ATOMIC) ? TENT_ACCESS_REMOTE_ATOMIC : 0u);
    int rc = tent_mem_register(engine, r.addr, r.length, access, &r.mem);
    if (rc != TENT_OK) {
        TENT_ERROR("interpose-mr", "interposer: tent cannot register %llu bytes at %p: %s",
                   static_cast<unsigned long long>(r.length), static_cast<void*>(r.addr), tent_strerror(rc));
        r.mem = nullptr;
        return false;
    }
    return true;
}

} // namespace

void track_mr(ibv_mr* mr, std::uint64_t iova, int access) {
    if (!mr || !provider_ops(mr->context)) return;
    Region r;
    r.context = mr->context;
    r.addr = static_cast<std::uint8_t*>(mr->addr);
    r.iova = iova;
    r.length = mr->length;
    r.access = access;
    r.lkey = mr->lkey;
    r.rkey = mr->rkey;
    std::lock_guard lock(g_mu);
    regions()[mr] = r;
}

void forget_mr(ibv_mr* mr) {
    tent_mem_t* mem = nullptr;
    {
        std::lock_guard lock(g_mu);
        auto it = regions().find(mr);
        if (it == regions().end()) return;
        mem = it->second.mem;
        regions().erase(it);
    }
    // Not once the process exits: the engine may be gone (the region
    // goes with the process).
    InsideEngine inside;
    if (mem && inside.usable()) {
        TentScope scope;
        tent_mem_deregister(mem);
    }
}

bool local_region(ibv_context* context, std::uint32_t lkey, std::uint64_t iova, std::uint64_t length,
                  tent_engine_t* engine, RegionView* out) {
    std::lock_guard lock(g_mu);
    for (auto& [mr, r] : regions()) {
        if (r.context != context || r.lkey != lkey) continue;
        if (iova < r.iova || iova + length > r.iova + r.length) continue;
        if (!ensure_registered(r, engine)) return false;
        *out = {r.addr, r.iova, r.length, r.mem};
        return true;
    }
    return false;
}

std::vector<Announcement> announcements(ibv_context* context, tent_engine_t* engine) {
    std::vector<Announcement> out;
    std::lock_guard lock(g_mu);
    for (auto& [mr, r] : regions()) {
        if (r.context != context) continue;
        if (!(r.access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC))) continue;
        if (!ensure_registered(r, engine)) continue;
        const void* key = nullptr;
        std::size_t len = 0;
        if (tent_mem_remote_key(r.mem, &key, &len) != TENT_OK || len != TENT_REMOTE_KEY_SIZE) continue;
        Announcement a;
        a.rkey = r.rkey;
        a.iova = r.iova;
        a.length = r.length;
        a.addr = reinterpret_cast<std::uintptr_t>(r.addr);
        std::memcpy(a.key, key, len);
        out.push_back(a);
    }
    return out;
}

} // namespace tent::interpose
