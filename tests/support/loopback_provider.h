// An in-process transport for tests and the engine-overhead benchmark (not
// part of the library): rails that join two engines in the same
// process through memory. A WRITE or READ is checked against the target's
// registrations (RegionLookup, key = the TCP key) exactly as a TCP rail
// checks it, then copied; a SEND is handed to the other side's rail. Each
// rail completes its operations only after a configurable number of
// progress() calls, so rails with different delays deliver out of order
// across rails -- what the engine's ordering and striping must survive.
// A rail can be broken: its operations then complete with RetryExceeded.
// It can be stalled: its operations then stay in flight until it is not.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "transport/provider.h"

namespace tent {

struct LoopbackLink;

// Shared by the two engines' providers; keyed by (connection id, rail id).
class LoopbackFabric {
public:
    // rails: rails per connection; delays[i % size]: progress() calls rail i
    // waits before completing an operation.
    explicit LoopbackFabric(std::size_t rails, std::vector<unsigned> delays = {0});

    std::size_t rails() const { return rails_; }
    unsigned delay(std::uint16_t rail_id) const { return delays_[rail_id % delays_.size()]; }
    // Every connection's rail `rail_id` fails (true) or works (false).
    void set_broken(std::uint16_t rail_id, bool broken) { set_flag(broken_, rail_id, broken); }
    bool broken(std::uint16_t rail_id) const { return flag(broken_, rail_id); }
    // Every connection's rail `rail_id` completes nothing (true) or carries on
    // (false): operations stay in flight, as behind a slow link.
    void set_stalled(std::uint16_t rail_id, bool stalled) { set_flag(stalled_, rail_id, stalled); }
    bool stalled(std::uint16_t rail_id) const { return flag(stalled_, rail_id); }
    // While these rails are stalled, `n` more operations of each complete
    // (in posting order, as they come due); then they complete nothing
    // again. All of them at once: none starts before the others may.
    void allow(std::initializer_list<std::uint16_t> rail_ids, std::uint64_t n);
    // Takes one of those completions; false when none is left.
    bool take_allowed(std::uint16_t rail_id);
    bool any_allowed(std::uint16_t rail_id) const;
    // The longest operation the fabric's rails take (4 MiB unless set); a
    // longer one is refused at post, as a TCP rail does.
    void set_max_op_length(std::uint64_t bytes) { max_op_length_ = bytes; }
    std::uint64_t max_op_length() const { return max_op_length_; }
    // Bytes moved by WRITE/READ/SEND per rail id, over all connections.
    std::uint64_t bytes(std::uint16_t rail_id) const;
    void add_bytes(std::uint16_t rail_id, std::uint64_t n);
    // Operations posted per rail id, and in how many groups: a post alone,
    // or all the posts between one begin_posts() and its end_posts() (what
    // a TCP rail sends in one sendmsg).
    struct PostCount {
        std::uint64_t posts = 0, groups = 0;
    };
    PostCount posts(std::uint16_t rail_id) const;
    void add_post(std::uint16_t rail_id, bool new_group);

    std::shared_ptr<LoopbackLink> link(std::uint64_t connection_id, std::uint16_t rail_id);

private:
    void set_flag(std::map<std::uint16_t, bool>& flags, std::uint16_t rail_id, bool on);
    bool flag(const std::map<std::uint16_t, bool>& flags, std::uint16_t rail_id) const;

    std::size_t rails_;
    std::vector<unsigned> delays_;
    mutable std::mutex mutex_;
    std::map<std::pair<std::uint64_t, std::uint16_t>, std::shared_ptr<LoopbackLink>> links_;
    std::map<std::uint16_t, bool> broken_;
    std::map<std::uint16_t, bool> stalled_;
    std::map<std::uint16_t, std::uint64_t> allowed_;
    std::map<std::uint16_t, std::uint64_t> bytes_;
    std::map<std::uint16_t, std::uint64_t> posts_, post_groups_;
    std::atomic<std::uint64_t> max_op_length_{std::uint64_t{4} << 20};
};

class LoopbackProvider final : public TransportProvider {
public:
    explicit LoopbackProvider(std::shared_ptr<LoopbackFabric> fabric, TransportKind kind = TransportKind::Tcp)
        : fabric_(std::move(fabric)), kind_(kind) {}

    TransportKind kind() const override { return kind_; }
    Status install(const RegionLookup& regions) override {
        regions_ = &regions;
        return Status::ok();
    }
    void describe(wire::AddressBlob&) const override {}
    Status register_region(void*, std::uint64_t, std::uint16_t, RegionKeys&) override { return Status::ok(); }
    void deregister_region(void*, const RegionKeys&) override {}
    Status propose_rails(const RailContext& ctx, std::vector<wire::RailInfo>& proposal) override;
    Status accept_rails(const RailContext& ctx, const std::vector<wire::RailInfo>& proposal,
                        std::vector<wire::RailInfo>& answer, std::vector<NewRail>& rails) override;
    Status complete_rails(const RailContext& ctx, const std::vector<wire::RailInfo>& answer,
                          std::vector<NewRail>& rails) override;

private:
    NewRail make_rail(std::uint64_t connection_id, std::uint16_t rail_id, int side);

    std::shared_ptr<LoopbackFabric> fabric_;
    TransportKind kind_;
    const RegionLookup* regions_ = nullptr;
};

} // namespace tent
