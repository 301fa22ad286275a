// The verbs transport as the engine sees it: every HCA port of the machine
// (port 1 of each device), advertised as HCA entries of the address blob;
// memory registered on each device's PD; one VerbsRail (an RC QP) per HCA
// pair shared with a peer -- rail i joins this engine's HCA i to the peer's
// HCA i. The initiator creates its QPs when proposing (their numbers travel
// in Hello), the responder creates and connects its own when accepting
// (numbers in HelloAck), and the initiator connects on the answer.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "config/config.h"
#include "transport/provider.h"
#include "transport/verbs/verbs_params.h"

namespace tent {

class VerbsDevice;
class VerbsMemoryRegion;
class VerbsRail;

class VerbsProvider final : public TransportProvider {
public:
    // Opens every device; a machine without any is not an error (no rails).
    static Result<std::unique_ptr<VerbsProvider>> create(const Config& config);
    ~VerbsProvider() override;

    TransportKind kind() const override { return TransportKind::Rdma; }
    Status install(const RegionLookup&) override { return Status::ok(); }
    void describe(wire::AddressBlob& blob) const override;
    Status register_region(void* addr, std::uint64_t length, std::uint16_t access, RegionKeys& keys) override;
    void deregister_region(void* addr, const RegionKeys& keys) override;
    Status propose_rails(const RailContext& ctx, std::vector<wire::RailInfo>& proposal) override;
    Status accept_rails(const RailContext& ctx, const std::vector<wire::RailInfo>& proposal,
                        std::vector<wire::RailInfo>& answer, std::vector<NewRail>& rails) override;
    Status complete_rails(const RailContext& ctx, const std::vector<wire::RailInfo>& answer,
                          std::vector<NewRail>& rails) override;

    std::vector<int> event_fds() const override;
    void poll_events(std::vector<DeviceEvent>& out) override;

    std::vector<std::string> device_names() const override;
    std::size_t device_count() const { return devices_.size(); }

private:
    VerbsProvider(std::vector<std::shared_ptr<VerbsDevice>> devices, VerbsRailParams params);
    Result<NewRail> connect_rail(std::unique_ptr<VerbsRail> rail, const RailContext& ctx, std::size_t local,
                                 std::size_t peer_index, std::uint32_t peer_qpn, std::uint16_t rail_id);

    std::vector<std::shared_ptr<VerbsDevice>> devices_;
    VerbsRailParams params_;
    std::mutex mutex_;  // registrations come from application threads
    // By the first device's lkey (unique while registered): one region per device.
    std::map<std::uint32_t, std::vector<std::unique_ptr<VerbsMemoryRegion>>> regions_;
    // Initiator QPs proposed and not yet answered, by (connection, rail id).
    std::map<std::pair<std::uint64_t, std::uint16_t>, std::unique_ptr<VerbsRail>> pending_;
};

} // namespace tent
