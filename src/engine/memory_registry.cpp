#include "engine/memory_registry.h"

#include <algorithm>
#include <random>
#include <string>

namespace tent {

MemoryRegistry::MemoryRegistry() {
    // Keys start at a random point so a stale handle from an earlier process
    // on the same address is unlikely to name a live region.
    std::random_device rd;
    next_key_ = rd() | 1u;
}

Result<std::shared_ptr<const Registration>> MemoryRegistry::add(void* addr, std::uint64_t length, std::uint16_t access,
                                                                const std::vector<TransportProvider*>& providers) {
    if (addr == nullptr || length == 0) return Status(Code::InvalidArgument, "cannot register an empty region");
    auto reg = std::make_shared<Registration>();
    reg->handle.address = reinterpret_cast<std::uint64_t>(addr);
    reg->handle.length = length;
    reg->handle.access = access;
    if (Status s = wire::validate_memory_handle(reg->handle); !s) return s;
    for (TransportProvider* p : providers) {
        RegionKeys keys;
        if (Status s = p->register_region(addr, length, access, keys); !s) {
            for (std::size_t i = 0; i < reg->keys.size(); ++i) providers[i]->deregister_region(addr, reg->keys[i]);
            return s;
        }
        for (std::uint32_t rkey : keys.rkeys) reg->handle.rkeys.push_back(rkey);
        reg->keys.push_back(std::move(keys));
    }
    if (reg->handle.rkeys.size() > wire::kMaxDevices) {
        for (std::size_t i = 0; i < reg->keys.size(); ++i) providers[i]->deregister_region(addr, reg->keys[i]);
        return Status(Code::Unsupported, "more HCAs than a memory handle can carry");
    }
    std::lock_guard lock(mutex_);
    reg->id = next_id_++;
    do {
        reg->handle.tcp_key = next_key_++;
    } while (reg->handle.tcp_key == 0 || by_tcp_key_.count(reg->handle.tcp_key));
    by_id_[reg->id] = reg;
    by_tcp_key_[reg->handle.tcp_key] = reg;
    by_address_.emplace(reg->handle.address, reg);
    longest_ = std::max(longest_, length);
    return std::shared_ptr<const Registration>(reg);
}

Status MemoryRegistry::remove(std::uint64_t id, const std::vector<TransportProvider*>& providers) {
    std::shared_ptr<const Registration> reg;
    {
        // Waits out a rail moving the region's bytes; every look-up after
        // this block fails.
        RegionUseLock::Exclusive no_rail_inside(*use_lock_);
        std::lock_guard lock(mutex_);
        auto it = by_id_.find(id);
        if (it == by_id_.end()) return Status(Code::NotFound, "no registration " + std::to_string(id));
        reg = it->second;
        by_id_.erase(it);
        by_tcp_key_.erase(reg->handle.tcp_key);
        auto [first, last] = by_address_.equal_range(reg->handle.address);
        for (auto a = first; a != last; ++a)
            if (a->second->id == id) {
                by_address_.erase(a);
                break;
            }
    }
    void* addr = reinterpret_cast<void*>(reg->handle.address);
    for (std::size_t i = 0; i < providers.size() && i < reg->keys.size(); ++i)
        providers[i]->deregister_region(addr, reg->keys[i]);
    return Status::ok();
}

std::optional<wire::MemoryHandle> MemoryRegistry::find_by_tcp_key(std::uint32_t key) const {
    std::lock_guard lock(mutex_);
    auto it = by_tcp_key_.find(key);
    if (it == by_tcp_key_.end()) return std::nullopt;
    return it->second->handle;
}

std::shared_ptr<const Registration> MemoryRegistry::find_local(const void* addr, std::uint64_t length) const {
    auto a = reinterpret_cast<std::uint64_t>(addr);
    std::lock_guard lock(mutex_);
    // Regions starting at or below a, nearest first; none starting more
    // than longest_ below a can reach it. Regions may overlap: any one
    // that holds the whole range will do.
    for (auto it = by_address_.upper_bound(a); it != by_address_.begin();) {
        --it;
        if (a - it->first > longest_) break;
        const auto& h = it->second->handle;
        if (a - h.address <= h.length && length <= h.length - (a - h.address)) return it->second;
    }
    return nullptr;
}

std::size_t MemoryRegistry::size() const {
    std::lock_guard lock(mutex_);
    return by_id_.size();
}

} // namespace tent
