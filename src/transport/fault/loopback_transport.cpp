#include "transport/fault/loopback_transport.h"

#include <cstring>

namespace tent {

LoopbackTransport::LoopbackTransport(TransportKind kind, std::string name)
    : kind_(kind), name_(std::move(name)) {}

Status LoopbackTransport::install() {
    installed_ = true;
    return Status::ok();
}

void LoopbackTransport::uninstall() {
    installed_ = false;
    done_.clear();
}

Status LoopbackTransport::submit(const TransferRequest& request) {
    if (!installed_) return Status(Code::TransportError, name_ + ": submit on a transport that is not installed");
    if (request.length > 0 && (request.local == nullptr || request.remote_addr == 0))
        return Status(Code::InvalidArgument, name_ + ": null buffer");
    auto* remote = reinterpret_cast<void*>(static_cast<std::uintptr_t>(request.remote_addr));
    if (request.length > 0) {
        if (request.op == TransferOp::Write)
            std::memmove(remote, request.local, request.length);
        else
            std::memmove(request.local, remote, request.length);
    }
    ++submitted_;
    done_.push_back(Completion{request.id, Status::ok()});
    return Status::ok();
}

std::size_t LoopbackTransport::poll(std::vector<Completion>& out, std::size_t max) {
    std::size_t n = 0;
    while (n < max && !done_.empty()) {
        out.push_back(std::move(done_.front()));
        done_.pop_front();
        ++n;
    }
    return n;
}

} // namespace tent
