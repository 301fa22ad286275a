#include "health/error_window.h"

#include <algorithm>

namespace tent {

ErrorWindow::ErrorWindow(Duration window, std::size_t threshold)
    : window_(window), threshold_(std::max<std::size_t>(threshold, 1)) {}

void ErrorWindow::expire(TimePoint now) {
    while (!stamps_.empty() && stamps_.front() <= now - window_) stamps_.pop_front();
}

bool ErrorWindow::add(TimePoint now) {
    expire(now);
    stamps_.push_back(now);
    while (stamps_.size() > threshold_) stamps_.pop_front();
    return stamps_.size() >= threshold_;
}

std::size_t ErrorWindow::count(TimePoint now) const {
    // An error at exactly now - window has left the window.
    return static_cast<std::size_t>(std::count_if(stamps_.begin(), stamps_.end(),
                                                  [&](TimePoint t) { return t > now - window_; }));
}

} // namespace tent
