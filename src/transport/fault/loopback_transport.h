// An in-memory Transport for tests: the "peer" is this process, remote_addr is
// a pointer into it, and every request completes at once after copying its
// bytes. It lets tests drive real request flows (bytes moved, completions
// polled) through the fault-injecting decorator without any network.
#pragma once

#include <deque>
#include <string>

#include "transport/transport.h"

namespace tent {

class LoopbackTransport final : public Transport {
public:
    LoopbackTransport(TransportKind kind, std::string name);

    TransportKind kind() const override { return kind_; }
    const std::string& name() const override { return name_; }
    Status install() override;
    void uninstall() override;
    Status submit(const TransferRequest& request) override;
    std::size_t poll(std::vector<Completion>& out, std::size_t max) override;

    std::size_t submitted() const { return submitted_; }

private:
    TransportKind kind_;
    std::string name_;
    bool installed_ = false;
    std::size_t submitted_ = 0;
    std::deque<Completion> done_;
};

} // namespace tent
