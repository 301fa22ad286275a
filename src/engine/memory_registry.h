// MemoryRegistry: every region the application registered with the engine.
// A region is registered once with every transport provider; its
// wire::MemoryHandle carries every HCA's rkey (in blob order) and the TCP key
// the TCP and loopback rails check on the target side (RegionLookup).
// Thread-safe: application threads register while rails look keys up.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "transport/provider.h"
#include "wire/memory_handle.h"

namespace tent {

struct Registration {
    std::uint64_t id = 0;
    wire::MemoryHandle handle;           // what the peer needs
    std::vector<RegionKeys> keys;        // one per provider, engine order
};

class MemoryRegistry final : public RegionLookup {
public:
    MemoryRegistry();

    // Registers with each provider; on any failure the ones already done
    // are undone. Zero length is an error.
    Result<std::shared_ptr<const Registration>> add(void* addr, std::uint64_t length, std::uint16_t access,
                                                    const std::vector<TransportProvider*>& providers);
    // Returns once no rail moves bytes of the region any more, and none will.
    Status remove(std::uint64_t id, const std::vector<TransportProvider*>& providers);

    std::optional<wire::MemoryHandle> find_by_tcp_key(std::uint32_t key) const override;
    std::shared_ptr<const RegionUseLock> use_lock() const override { return use_lock_; }
    // The registration containing [addr, addr + length), or nullptr.
    std::shared_ptr<const Registration> find_local(const void* addr, std::uint64_t length) const;
    std::size_t size() const;

private:
    mutable std::mutex mutex_;
    // Taken before mutex_ (rails hold it while they look regions up).
    std::shared_ptr<RegionUseLock> use_lock_ = std::make_shared<RegionUseLock>();
    std::map<std::uint64_t, std::shared_ptr<const Registration>> by_id_;
    // The same by start address, for find_local() on every post: a scan
    // of by_id_ cost a post through the interposer, whose send buffers are
    // registrations of their own (hundreds under perftest), tens of
    // microseconds at worst.
    std::multimap<std::uint64_t, std::shared_ptr<const Registration>> by_address_;
    std::uint64_t longest_ = 0;  // the longest region ever registered: how far back a lookup looks
    std::map<std::uint32_t, std::shared_ptr<const Registration>> by_tcp_key_;
    std::uint64_t next_id_ = 1;
    std::uint32_t next_key_;
};

} // namespace tent
