#include "transport/verbs/verbs_provider.h"

#include <infiniband/verbs.h>

#include "common/log.h"
#include "transport/verbs/device_filter.h"
#include "transport/verbs/hca_pairing.h"
#include "transport/verbs/verbs_address.h"
#include "transport/verbs/verbs_device.h"
#include "transport/verbs/verbs_memory.h"
#include "transport/verbs/verbs_rail.h"
#include "wire/protocol.h"

namespace tent {

VerbsProvider::VerbsProvider(std::vector<std::shared_ptr<VerbsDevice>> devices, VerbsRailParams params)
    : devices_(std::move(devices)), params_(params) {}

VerbsProvider::~VerbsProvider() = default;

Result<std::unique_ptr<VerbsProvider>> VerbsProvider::create(const Config& config) {
    VerbsRailParams params = VerbsRailParams::from_config(config);
    std::vector<std::string> present;
    int n = 0;
    ibv_device** list = ibv_get_device_list(&n);
    for (int i = 0; list && i < n; ++i) present.emplace_back(ibv_get_device_name(list[i]));
    if (list) ibv_free_device_list(list);
    auto chosen = select_devices(present, config.get_string(Knob::VerbsDevices));
    if (!chosen) return chosen.status();
    std::vector<std::shared_ptr<VerbsDevice>> devices;
    for (const auto& name : *chosen) {
        if (devices.size() == wire::kMaxDevices) break;
        auto dev = VerbsDevice::open(name, 1, params.gid_index);
        if (!dev) {
            TENT_WARN("verbs-device-skipped", "%s: %s", name.c_str(), dev.status().to_string().c_str());
            continue;
        }
        devices.push_back(std::move(*dev));
    }
    return std::unique_ptr<VerbsProvider>(new VerbsProvider(std::move(devices), params));
}

void VerbsProvider::describe(wire::AddressBlob& blob) const {
    for (const auto& d : devices_) blob.hcas.push_back(hca_address(*d));
}

std::vector<int> VerbsProvider::event_fds() const {
    std::vector<int> fds;
    for (const auto& d : devices_) fds.push_back(d->async_fd());
    return fds;
}

void VerbsProvider::poll_events(std::vector<DeviceEvent>& out) {
    std::vector<VerbsAsyncEvent> events;
    for (const auto& d : devices_) {
        events.clear();
        d->read_async_events(events);
        for (const auto& e : events) {
            AsyncEvent h = health_event_of(e.kind);
            if (h == AsyncEvent::Other) continue;  // QP events come back as completions
            out.push_back({d->name(), e.port_num, h});
        }
    }
}

Status VerbsProvider::register_region(void* addr, std::uint64_t length, std::uint16_t access, RegionKeys& keys) {
    std::vector<std::unique_ptr<VerbsMemoryRegion>> mrs;
    for (const auto& d : devices_) {
        auto mr = d->register_memory(addr, length, access);
        if (!mr) return mr.status();  // the ones made so far go with mrs
        keys.rkeys.push_back((*mr)->rkey());
        keys.lkeys.push_back((*mr)->lkey());
        mrs.push_back(std::move(*mr));
    }
    if (mrs.empty()) return Status::ok();
    std::lock_guard lock(mutex_);
    regions_[keys.lkeys.front()] = std::move(mrs);
    return Status::ok();
}

void VerbsProvider::deregister_region(void*, const RegionKeys& keys) {
    if (keys.lkeys.empty()) return;
    // Deregistered once the lock is let go (declared before it): under the
    // interposer, ibv_dereg_mr takes the interposer's region lock, which a
    // thread holds while it registers here.
    std::vector<std::unique_ptr<VerbsMemoryRegion>> going;
    std::lock_guard lock(mutex_);
    if (auto it = regions_.find(keys.lkeys.front()); it != regions_.end()) {
        going = std::move(it->second);
        regions_.erase(it);
    }
}

std::vector<std::string> VerbsProvider::device_names() const {
    std::vector<std::string> names;
    for (const auto& device : devices_) names.push_back(device->name());
    return names;
}

Status VerbsProvider::propose_rails(const RailContext& ctx, std::vector<wire::RailInfo>& proposal) {
    std::vector<std::string> local_names = device_names(), peer_names;
    for (std::size_t j = ctx.peer_hca_offset; j < ctx.peer->hcas.size(); ++j)
        peer_names.push_back(ctx.peer->hcas[j].device);
    const auto pairs = pair_hcas(local_names, peer_names);
    for (std::size_t k = 0; k < pairs.size(); ++k) {
        const auto [local, peer] = pairs[k];
        auto rail = VerbsRail::create(devices_[local], params_, SteadyClock::instance());
        if (!rail) return rail.status();
        auto id = static_cast<std::uint16_t>(ctx.first_rail_id + k);
        proposal.push_back({id, wire::RailKind::Verbs, static_cast<std::uint8_t>(ctx.local_hca_offset + local),
                            static_cast<std::uint8_t>(ctx.peer_hca_offset + peer), (*rail)->qp_num()});
        pending_[{ctx.connection_id, id}] = std::move(*rail);
    }
    return Status::ok();
}

Result<NewRail> VerbsProvider::connect_rail(std::unique_ptr<VerbsRail> rail, const RailContext& ctx, std::size_t local,
                                            std::size_t peer_index, std::uint32_t peer_qpn, std::uint16_t rail_id) {
    const wire::HcaAddress& hca = ctx.peer->hcas[peer_index];
    auto remote = remote_rail_info(hca, peer_qpn);
    if (!remote) return remote.status();
    std::string remote_name = ctx.peer->hostname + " " + hca.device + ":" + std::to_string(hca.port);
    if (Status s = rail->connect(*remote, remote_name); !s) return s;
    NewRail r;
    r.rail_id = rail_id;
    r.local_device = devices_[local]->name();
    r.local_port = 1;
    r.remote_device = hca.device;
    r.remote_port = hca.port;
    r.local_entry = local;
    r.remote_entry = peer_index - ctx.peer_hca_offset;
    r.rail = std::move(rail);
    return r;
}

Status VerbsProvider::accept_rails(const RailContext& ctx, const std::vector<wire::RailInfo>& proposal,
                                   std::vector<wire::RailInfo>& answer, std::vector<NewRail>& rails) {
    for (const auto& info : proposal) {
        // info is the initiator's view: its remote_index is our HCA.
        if (info.remote_index < ctx.local_hca_offset || info.remote_index - ctx.local_hca_offset >= devices_.size() ||
            info.local_index >= ctx.peer->hcas.size())
            continue;
        std::size_t local = info.remote_index - ctx.local_hca_offset;
        auto rail = VerbsRail::create(devices_[local], params_, SteadyClock::instance());
        if (!rail) return rail.status();
        std::uint32_t qpn = (*rail)->qp_num();
        auto made = connect_rail(std::move(*rail), ctx, local, info.local_index, info.qpn, info.rail_id);
        if (!made) return made.status();
        answer.push_back({info.rail_id, wire::RailKind::Verbs, info.remote_index, info.local_index, qpn});
        rails.push_back(std::move(*made));
    }
    return Status::ok();
}

Status VerbsProvider::complete_rails(const RailContext& ctx, const std::vector<wire::RailInfo>& answer,
                                     std::vector<NewRail>& rails) {
    Status result;
    for (const auto& info : answer) {
        // The responder's view: its local_index is the peer's HCA, remote_index ours.
        auto it = pending_.find({ctx.connection_id, info.rail_id});
        if (it == pending_.end() || info.local_index >= ctx.peer->hcas.size()) continue;
        std::unique_ptr<VerbsRail> rail = std::move(it->second);
        pending_.erase(it);
        auto made = connect_rail(std::move(rail), ctx, info.remote_index - ctx.local_hca_offset, info.local_index,
                                 info.qpn, info.rail_id);
        if (!made) {
            result = made.status();
            break;
        }
        rails.push_back(std::move(*made));
    }
    // QPs the responder did not take are not needed.
    for (auto it = pending_.begin(); it != pending_.end();)
        it = it->first.first == ctx.connection_id ? pending_.erase(it) : std::next(it);
    return result;
}

} // namespace tent
