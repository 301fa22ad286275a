#include "loopback_provider.h"

#include <cstring>
#include <deque>
#include <string>

namespace tent {

struct LoopbackLink {
    std::mutex mutex;
    const RegionLookup* regions[2] = {nullptr, nullptr};
    // Messages delivered to side i: header and payload, copied.
    std::deque<std::pair<std::vector<std::uint8_t>, std::vector<std::uint8_t>>> inbox[2];
};

namespace {

class LoopbackRail final : public Rail {
public:
    LoopbackRail(std::shared_ptr<LoopbackFabric> fabric, std::shared_ptr<LoopbackLink> link, std::uint16_t rail_id,
                 int side, TransportKind kind)
        : fabric_(std::move(fabric)), link_(std::move(link)), rail_id_(rail_id), side_(side), kind_(kind),
          name_("loopback rail " + std::to_string(rail_id) + (side ? " (passive)" : " (active)")) {}

    TransportKind kind() const override { return kind_; }
    const std::string& name() const override { return name_; }
    std::uint64_t max_op_length() const override { return fabric_->max_op_length(); }
    int wait_fd() const override { return -1; }

    Status post(const RailOp& op) override {
        if (op.length > max_op_length())
            return Status(Code::InvalidArgument, name_ + ": an operation of " + std::to_string(op.length) +
                                                     " bytes above the maximum of " + std::to_string(max_op_length()));
        Pending p{op, fabric_->delay(rail_id_), SteadyClock::instance().now(), {}};
        p.header.assign(op.send_header.begin(), op.send_header.end());
        pending_.push_back(std::move(p));
        fabric_->add_post(rail_id_, !holding_ || held_posts_++ == 0);
        return Status::ok();
    }
    void begin_posts() override {
        holding_ = true;
        held_posts_ = 0;
    }
    void end_posts() override { holding_ = false; }

    void progress(std::vector<RailCompletion>& done,
                  const std::function<void(const RailMessage&)>& on_message) override {
        const bool stalled = fabric_->stalled(rail_id_);
        if (stalled && !fabric_->any_allowed(rail_id_)) return;
        while (!pending_.empty() && pending_.front().ticks == 0) {
            if (stalled && !fabric_->take_allowed(rail_id_)) break;
            Pending p = std::move(pending_.front());
            pending_.pop_front();
            RailCompletion c{p.op.cookie, RailOutcome::Success, execute(p), {}};
            if (!c.status) c.outcome = c.status.code() == Code::RemoteAccess ? RailOutcome::RemoteAccess
                                                                             : RailOutcome::RetryExceeded;
            c.latency = SteadyClock::instance().now() - p.posted;
            done.push_back(std::move(c));
        }
        for (auto& p : pending_)
            if (p.ticks > 0) --p.ticks;
        if (stalled) return;
        std::deque<std::pair<std::vector<std::uint8_t>, std::vector<std::uint8_t>>> inbox;
        {
            std::lock_guard lock(link_->mutex);
            inbox.swap(link_->inbox[side_]);
        }
        for (auto& [header, payload] : inbox) on_message(RailMessage{header, payload});
    }

private:
    struct Pending {
        RailOp op;
        unsigned ticks;
        TimePoint posted;
        std::vector<std::uint8_t> header;
    };

    Status execute(const Pending& p) {
        if (fabric_->broken(rail_id_)) return Status(Code::RailDown, name_ + " is broken");
        const RailOp& op = p.op;
        const RegionLookup* peer;
        {
            std::lock_guard lock(link_->mutex);
            peer = link_->regions[1 - side_];
        }
        if (op.opcode == RailOpcode::Probe) return Status::ok();
        if (op.opcode == RailOpcode::Send) {
            auto* src = static_cast<const std::uint8_t*>(op.local);
            std::lock_guard lock(link_->mutex);
            link_->inbox[1 - side_].emplace_back(p.header, std::vector<std::uint8_t>(src, src + op.length));
            fabric_->add_bytes(rail_id_, op.length);
            return Status::ok();
        }
        if (!peer) return Status(Code::RailDown, name_ + ": peer side not attached");
        auto region = peer->find_by_tcp_key(op.rkey);
        if (!region) return Status(Code::RemoteAccess, name_ + ": unknown remote key");
        bool write = op.opcode == RailOpcode::Write;
        Status s = wire::check_remote_access(*region, op.remote_addr, op.length,
                                             write ? wire::kAccessRemoteWrite : wire::kAccessRemoteRead);
        if (!s) return s;
        auto* remote = reinterpret_cast<void*>(op.remote_addr);
        if (op.length) {
            if (write)
                std::memcpy(remote, op.local, op.length);
            else
                std::memcpy(op.local, remote, op.length);
        }
        fabric_->add_bytes(rail_id_, op.length);
        return Status::ok();
    }

    std::shared_ptr<LoopbackFabric> fabric_;
    std::shared_ptr<LoopbackLink> link_;
    std::uint16_t rail_id_;
    int side_;
    TransportKind kind_;
    std::string name_;
    std::deque<Pending> pending_;
    // Inside begin_posts()/end_posts(), and how many posts came in it.
    bool holding_ = false;
    std::size_t held_posts_ = 0;
};

} // namespace

LoopbackFabric::LoopbackFabric(std::size_t rails, std::vector<unsigned> delays)
    : rails_(rails), delays_(delays.empty() ? std::vector<unsigned>{0} : std::move(delays)) {}

void LoopbackFabric::set_flag(std::map<std::uint16_t, bool>& flags, std::uint16_t rail_id, bool on) {
    std::lock_guard lock(mutex_);
    flags[rail_id] = on;
}

bool LoopbackFabric::flag(const std::map<std::uint16_t, bool>& flags, std::uint16_t rail_id) const {
    std::lock_guard lock(mutex_);
    auto it = flags.find(rail_id);
    return it != flags.end() && it->second;
}

void LoopbackFabric::allow(std::initializer_list<std::uint16_t> rail_ids, std::uint64_t n) {
    std::lock_guard lock(mutex_);
    for (std::uint16_t id : rail_ids) allowed_[id] += n;
}

bool LoopbackFabric::take_allowed(std::uint16_t rail_id) {
    std::lock_guard lock(mutex_);
    auto it = allowed_.find(rail_id);
    if (it == allowed_.end() || it->second == 0) return false;
    --it->second;
    return true;
}

bool LoopbackFabric::any_allowed(std::uint16_t rail_id) const {
    std::lock_guard lock(mutex_);
    auto it = allowed_.find(rail_id);
    return it != allowed_.end() && it->second > 0;
}

std::uint64_t LoopbackFabric::bytes(std::uint16_t rail_id) const {
    std::lock_guard lock(mutex_);
    auto it = bytes_.find(rail_id);
    return it == bytes_.end() ? 0 : it->second;
}

void LoopbackFabric::add_bytes(std::uint16_t rail_id, std::uint64_t n) {
    std::lock_guard lock(mutex_);
    bytes_[rail_id] += n;
}

void LoopbackFabric::add_post(std::uint16_t rail_id, bool new_group) {
    std::lock_guard lock(mutex_);
    ++posts_[rail_id];
    if (new_group) ++post_groups_[rail_id];
}

LoopbackFabric::PostCount LoopbackFabric::posts(std::uint16_t rail_id) const {
    std::lock_guard lock(mutex_);
    auto posts = posts_.find(rail_id);
    auto groups = post_groups_.find(rail_id);
    return {posts == posts_.end() ? 0 : posts->second, groups == post_groups_.end() ? 0 : groups->second};
}

std::shared_ptr<LoopbackLink> LoopbackFabric::link(std::uint64_t connection_id, std::uint16_t rail_id) {
    std::lock_guard lock(mutex_);
    auto& l = links_[{connection_id, rail_id}];
    if (!l) l = std::make_shared<LoopbackLink>();
    return l;
}

NewRail LoopbackProvider::make_rail(std::uint64_t connection_id, std::uint16_t rail_id, int side) {
    auto link = fabric_->link(connection_id, rail_id);
    {
        std::lock_guard lock(link->mutex);
        link->regions[side] = regions_;
    }
    NewRail r;
    r.rail_id = rail_id;
    r.rail = std::make_unique<LoopbackRail>(fabric_, link, rail_id, side, kind_);
    r.local_device = "loop" + std::to_string(rail_id);
    r.remote_device = r.local_device;
    return r;
}

Status LoopbackProvider::propose_rails(const RailContext& ctx, std::vector<wire::RailInfo>& proposal) {
    for (std::size_t i = 0; i < fabric_->rails(); ++i)
        proposal.push_back({static_cast<std::uint16_t>(ctx.first_rail_id + i),
                            kind_ == TransportKind::Rdma ? wire::RailKind::Verbs : wire::RailKind::Tcp, 0, 0,
                            kind_ == TransportKind::Rdma ? 1u : 0u});  // verbs rails name a QP
    return Status::ok();
}

Status LoopbackProvider::accept_rails(const RailContext& ctx, const std::vector<wire::RailInfo>& proposal,
                                      std::vector<wire::RailInfo>& answer, std::vector<NewRail>& rails) {
    for (const auto& info : proposal) {
        answer.push_back(info);
        rails.push_back(make_rail(ctx.connection_id, info.rail_id, 1));
    }
    return Status::ok();
}

Status LoopbackProvider::complete_rails(const RailContext& ctx, const std::vector<wire::RailInfo>& answer,
                                        std::vector<NewRail>& rails) {
    for (const auto& info : answer) rails.push_back(make_rail(ctx.connection_id, info.rail_id, 0));
    return Status::ok();
}

} // namespace tent
