#include "engine/send_flow.h"

namespace tent {

void SendWindow::started(std::uint64_t msg_seq, std::uint64_t length) {
    const std::uint64_t w = message_weight(length);
    outstanding_.emplace_back(msg_seq, w);
    outstanding_weight_ += w;
}

bool SendWindow::withdraw(std::uint64_t msg_seq) {
    if (outstanding_.empty() || outstanding_.back().first != msg_seq) return false;
    outstanding_weight_ -= outstanding_.back().second;
    outstanding_.pop_back();
    return true;
}

void SendWindow::credited(std::uint64_t delivered, std::uint64_t window) {
    window_ = window;
    while (!outstanding_.empty() && outstanding_.front().first <= delivered) {
        outstanding_weight_ -= outstanding_.front().second;
        outstanding_.pop_front();
    }
}

} // namespace tent
